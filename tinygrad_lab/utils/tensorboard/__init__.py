"""`tinygrad_lab.utils.tensorboard`: PyTorch's SummaryWriter, writing TensorBoard's own event
files with the `tensorboard` package (pip install 'tinygrad-lab[tensorboard]').

    from tinygrad_lab.utils.tensorboard import SummaryWriter
    with SummaryWriter("runs/exp1") as writer:
        writer.add_scalar("loss/train", loss.item(), step)
    # then: tensorboard --logdir runs   (in a notebook: %load_ext tensorboard, %tensorboard --logdir runs)
"""
from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
