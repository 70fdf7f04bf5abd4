"""tinygrad_lab.distributions: probability distributions with PyTorch's API (torch.distributions).

    dist = Categorical(logits=policy(state))
    action = dist.sample()                       # REINFORCE: sample, then
    loss = -dist.log_prob(action) * reward       # push up the log-probability of good actions

Every distribution is built from the engine's ops, so log_prob, entropy, rsample, ... are
differentiable in the parameters. Randomness comes from tinygrad_lab's seeded generators.
Gamma, Beta and Dirichlet draw gamma variates whose gradient in the concentration is the implicit
reparameterisation one (ops.pointwise.StandardGamma).
"""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .gamma import Beta, Dirichlet, Gamma, Poisson
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential", "Gamma", "Independent",
           "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
