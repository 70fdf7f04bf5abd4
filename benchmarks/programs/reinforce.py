"""pytorch/examples reinforcement_learning/reinforce.py: a policy network (Linear, Dropout 0.6,
ReLU, Linear, softmax) samples each action from torch.distributions.Categorical and keeps its
log_prob; after each episode the discounted returns (gamma 0.99) are normalised and the loss
sum(-log_prob * return) is minimised by Adam (lr 1e-2); a running reward is kept as the example's.

In place of gym's CartPole, a tiny environment written here (`SignGame`): the state is 4 random
numbers, the right action is 1 when the first is positive, a right action earns 1, and an
episode ends after 3 wrong actions or 30 steps. Seeded (torch.manual_seed, NumPy for the
environment); the action draws differ between libraries, so the result is compared by scale
only. Returns minus the mean reward per episode over the last 5 episodes (lower is better).
"""
import numpy as np

STEPS = 15
FULL_STEPS = 200
GAMMA, MAX_STEPS, MAX_MISSES = 0.99, 30, 3


class SignGame:
    """The environment: reset() -> state; step(action) -> (state, reward, done)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.t, self.misses = 0, 0
        self.state = self.rng.standard_normal(4).astype(np.float32)
        return self.state

    def step(self, action: int):
        right = action == int(self.state[0] > 0)
        self.t, self.misses = self.t + 1, self.misses + (not right)
        self.state = self.rng.standard_normal(4).astype(np.float32)
        return self.state, float(right), self.misses >= MAX_MISSES or self.t >= MAX_STEPS


def _policy(torch):
    nn, F = torch.nn, torch.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 128)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(128, 2)
            self.saved_log_probs, self.rewards = [], []

        def forward(self, x):
            x = F.relu(self.dropout(self.affine1(x)))
            return F.softmax(self.affine2(x), dim=1)

    return Policy()


def finish_episode(torch, policy, optimizer, eps: float) -> None:
    returns, R = [], 0.0
    for r in policy.rewards[::-1]:
        R = r + GAMMA * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = torch.cat([-log_prob * R for log_prob, R in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:], policy.saved_log_probs[:]


def run(torch, steps: int = STEPS) -> float:
    """`steps` episodes."""
    torch.manual_seed(543)
    env, policy = SignGame(seed=543), _policy(torch)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    running_reward, episode_rewards = 10.0, []
    for _ in range(steps):
        state, ep_reward, done = env.reset(), 0.0, False
        while not done:
            probs = policy(torch.from_numpy(state).float().unsqueeze(0))
            m = torch.distributions.Categorical(probs)
            action = m.sample()
            policy.saved_log_probs.append(m.log_prob(action))
            state, reward, done = env.step(action.item())
            policy.rewards.append(reward)
            ep_reward += reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        finish_episode(torch, policy, optimizer, eps)
        episode_rewards.append(ep_reward)
    return -float(np.mean(episode_rewards[-5:]))
