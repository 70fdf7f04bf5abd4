"""nn.Parameter: a tensor that a Module registers as one of its learnable weights; nn.Buffer: one it
registers as state that is not learned (a buffer); UninitializedParameter / UninitializedBuffer: the
placeholders a lazy module holds until its first input says what shape they have."""
from __future__ import annotations

from .. import creation
from ..autograd.tensor_base import TensorBase
from ..tensor import Tensor, parse_to


class Parameter(Tensor):
    """A leaf tensor that requires grad and is registered by `Module.__setattr__`.
    `Parameter(t)` shares t's memory, as in PyTorch."""

    def __new__(cls, data: TensorBase | None = None, requires_grad: bool = True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        p = object.__new__(cls)
        TensorBase.__init__(p, data._data, data._device)
        p.requires_grad = requires_grad  # validates: only floating point tensors can require grad
        return p

    def __init__(self, data=None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        """Refused on purpose: a pickle runs code when it is loaded, so a checkpoint that needs one
        is a risk; tinygrad_lab.save stores parameters (and whole modules) without pickle.
        copy.deepcopy does not need pickling (Tensor.__deepcopy__)."""
        raise TypeError("Parameters are saved through state_dict() and tinygrad_lab.save, not pickle "
                        "(copy.deepcopy works)")


class _BufferMeta(type):
    """isinstance(t, Buffer) asks whether t was marked by Buffer(...): a buffer stays an ordinary Tensor."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TensorBase) and obj.__dict__.get("_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer: `module.name = Buffer(t)` registers it as register_buffer would (in
    buffers() and, when persistent, in state_dict()). As in PyTorch, Buffer(t) gives back an ordinary
    Tensor (t detached, sharing its memory, with t's requires_grad) carrying the mark and `persistent`."""

    def __new__(cls, data: TensorBase | None = None, *, persistent: bool = True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Buffer expects a Tensor, got {type(data).__name__}")
        t = data.detach()
        t.requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# ------------------------------------------------------------------ tensors whose shape is not known yet

_SHAPE_UNKNOWN = ("Can't read the shape of an uninitialized {kind}: a lazy module gives its {kind}s their shapes "
                  "from its first input. Call the module once on a sample batch (or load a state_dict into it) "
                  "first. Loading a state_dict that holds uninitialized tensors into an initialized module also "
                  "lands here.")
_USE_REFUSED = ("Attempted to use an uninitialized {kind} ({what}). Its shape is unknown until the lazy module "
                "that owns it sees its first input: call the module once on a sample batch (or load a state_dict "
                "into it) before using the {kind}.")


class _Unallocated:
    """Stands in for the array of a tensor whose shape is not known yet: it has a dtype and can be
    copied (deepcopy), and any other use raises, so no op can run on it by accident."""

    __slots__ = ("dtype", "kind")

    def __init__(self, dtype, kind: str) -> None:
        self.dtype = dtype  # the NumPy dtype the tensor will have
        self.kind = kind    # "parameter" or "buffer", for the messages

    def copy(self) -> "_Unallocated":
        return _Unallocated(self.dtype, self.kind)

    def refuse(self, what: str) -> ValueError:
        return ValueError(_USE_REFUSED.format(kind=self.kind, what=what))

    def __getattr__(self, name: str):  # shape, ndim, size, reshape, ...: everything but dtype and copy
        if name.startswith("__"):  # protocol probes (__array_interface__, ...) are told "absent"
            raise AttributeError(name)
        raise self.refuse(f"an op read .{name} of its data")

    def __array__(self, *args, **kwargs):
        raise self.refuse("converting it to an array")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise self.refuse(f"in {ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        raise self.refuse(f"in {func.__name__}")


def _refusing(name: str):
    def method(self, *args):
        raise self.refuse(f"in operator {name}")
    return method


# the operators Python looks up on the type (not through __getattr__): each refuses too
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    setattr(_Unallocated, f"__{_name}__", _refusing(_name))
    setattr(_Unallocated, f"__r{_name}__", _refusing(_name))
for _name in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "getitem", "setitem", "len", "iter",
              "bool", "float", "int", "index", "complex"):
    setattr(_Unallocated, f"__{_name}__", _refusing(_name))
del _name


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: a dtype, a device and requires_grad but
    no shape yet. Moving it (to(), double(), cuda(), ...) and deepcopy work; reading its shape raises
    RuntimeError and any other use ValueError (as PyTorch). `materialize(shape)` gives it memory of that
    shape in place and turns it into its ordinary class (`cls_to_become`), so whoever holds it (a module,
    an optimizer) holds the real tensor from then on."""

    cls_to_become: type
    _kind: str

    @classmethod
    def _blank(cls, requires_grad: bool, device, dtype):
        like = creation.empty(0, dtype=dtype, device=device)  # resolves the defaults, checks the device
        t = object.__new__(cls)
        TensorBase.__init__(t, _Unallocated(like._data.dtype, cls._kind), like._device)
        t.requires_grad = requires_grad  # refuses a non-floating dtype, as for any tensor
        return t

    def __init__(self, *args, **kwargs) -> None:
        pass  # everything happens in __new__

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor memory of `shape` (not initialised: fill it next), on its own device and dtype
        unless given, and make it a plain Parameter (or Tensor, for a buffer)."""
        t = creation.empty(shape, dtype=self.dtype if dtype is None else dtype,
                           device=self.device if device is None else device)
        self._data, self._device = t._data, t._device
        self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        """A new uninitialized tensor of the same kind with the requested device and/or dtype."""
        device, dtype, _ = parse_to(*args, **kwargs)
        return type(self)(self.requires_grad, self.device if device is None else device,
                          self.dtype if dtype is None else dtype, **self._options())

    def _options(self) -> dict:
        return {}

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_UNKNOWN.format(kind=self._kind))

    def size(self, dim: int | None = None):
        """Refused, as shape (deviation: PyTorch's size() answers the placeholder's Size([0]))."""
        raise RuntimeError(_SHAPE_UNKNOWN.format(kind=self._kind))

    def detach(self):
        """The tensor itself, so that a state_dict holds the uninitialized tensor as PyTorch's does.
        Deviation: PyTorch's detach() of one raises ValueError; there are no values to detach here."""
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module fills in at its first call (it then becomes a Parameter)."""

    cls_to_become = Parameter
    _kind = "parameter"

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return cls._blank(requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module fills in at its first call (it then becomes a Tensor).
    Assigned to a module attribute, it is registered as a buffer (persistent unless told otherwise)."""

    cls_to_become = Tensor
    _kind = "buffer"

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        t = cls._blank(requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True  # so that isinstance(t, Buffer) and assignment register it
        return t

    def _options(self) -> dict:
        return {"persistent": self.persistent}


def is_lazy(t) -> bool:
    """Whether t is an UninitializedParameter or UninitializedBuffer (its shape not known yet)."""
    return isinstance(t, UninitializedTensorMixin)
