"""The nn modules: the Module base, containers and layers."""
from .container import ModuleDict, ModuleList, Sequential
from .module import Module

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict"]
