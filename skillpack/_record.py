"""Frozen, slotted records for the modules `skillpack.runtime` imports at cold start.

The house style for records is ``@dataclass(frozen=True, slots=True)``. The runtime's cold
path (errors, storedzip's reader, the formats, and the few skillmd modules a first turn
reads) cannot afford it: in a fresh interpreter, importing ``dataclasses`` costs about 12 ms
(it imports ``inspect``, hence ``ast``, ``dis``, ``tokenize``, ``re``, ``enum``...) and each
decorated class another ~0.4 ms of generated code, against a cold start of a few tens of ms
(docs/PERFORMANCE.md, the first turn). Only those modules use `Record`.

A `Record` subclass declares its fields once, as annotations (a default after ``=``), and
gets what a frozen dataclass gives, with the same behaviour: ``__init__`` (positional or
keyword arguments, defaults), ``__repr__`` (``Name(field=value, ...)``), ``__eq__`` (same
class and equal fields), ``__hash__`` (of the fields), ``__match_args__``, and
``__setattr__``/``__delattr__`` raising :class:`dataclasses.FrozenInstanceError` (an
``AttributeError``; ``dataclasses`` is imported only then). Instances have ``__slots__``,
pickle and copy by their fields. ``dataclasses.fields()``, ``replace()`` and ``asdict()`` do
not apply: use the record's ``to_dict`` (or its own ``replace``). A field may be declared
with `field` (``default_factory``, ``compare=False``, ``repr=False``, as
:func:`dataclasses.field`), and a ``__post_init__`` runs after ``__init__``, as a
dataclass's does.

Only the standard library's builtins are used. A class's first instances are built by one
shared function that binds the arguments to the fields; its ninth gets the class its own
``__init__``, generated (like a dataclass's, about 0.1 ms) and used from then on, as does any
call whose arguments do not bind, so that the error is Python's own. A record class that a
cold start never builds, or builds a few times, costs nothing more than its class statement.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing `typing` costs 3 to 8 ms cold
if TYPE_CHECKING:
    from typing import Any, ClassVar, dataclass_transform
else:
    def dataclass_transform(**_: object) -> Any:
        return lambda cls: cls

__all__ = ["Record", "field"]

_setattr = object.__setattr__


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


class _Field:
    """What `field` declares: a default or a factory of one, and whether the field takes
    part in ``__eq__``/``__hash__`` and in ``__repr__``."""

    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(self, default: Any, factory: Any, compare: bool, repr: bool) -> None:
        self.default, self.factory, self.compare, self.repr = default, factory, compare, repr


def field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True,
          repr: bool = True) -> Any:
    """A record field with a default made per instance (``default_factory``), or left out of
    equality and hashing (``compare=False``) or of the repr (``repr=False``): the same
    options as :func:`dataclasses.field`."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, compare, repr)


def _frozen(name: str, verb: str) -> AttributeError:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot {verb} field {name!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class _RecordType(type):
    """Turns the annotations of a `Record` subclass into slots, defaults and methods."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any,
    ) -> _RecordType:
        inherited: tuple[str, ...] = ()
        defaults: dict[str, Any] = {}
        factories: dict[str, Any] = {}
        uncompared: set[str] = set()  # compare=False
        unshown: set[str] = set()  # repr=False
        for base in bases:
            inherited += getattr(base, "_fields", ())
            defaults.update(getattr(base, "_defaults", {}))
            factories.update(getattr(base, "_factories", {}))
            uncompared.update(getattr(base, "_uncompared", ()))
            unshown.update(getattr(base, "_unshown", ()))
        own = [f for f in namespace.get("__annotations__", {}) if f not in inherited]
        for name in own:
            if name in namespace:
                value = namespace.pop(name)
                if isinstance(value, _Field):
                    if not value.compare:
                        uncompared.add(name)
                    if not value.repr:
                        unshown.add(name)
                    if value.factory is not _MISSING:
                        factories[name] = value.factory
                        defaults[name] = _MISSING
                        continue
                    if value.default is _MISSING:
                        if defaults:
                            raise TypeError(
                                f"non-default argument {name!r} follows default argument")
                        continue
                    value = value.default
                defaults[name] = value
            elif defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        namespace.setdefault("__slots__", tuple(own))
        fields = inherited + tuple(own)
        namespace["_fields"] = fields
        namespace["_defaults"] = defaults
        namespace["_factories"] = factories
        namespace["_uncompared"] = frozenset(uncompared)
        namespace["_unshown"] = frozenset(unshown)
        namespace["_compared"] = tuple(
            f for f in fields if f not in uncompared) if uncompared else None
        namespace["_shown"] = tuple(f for f in fields if f not in unshown)
        namespace["__match_args__"] = fields
        if "__init__" not in namespace:
            namespace["__init__"] = _first_init
        return super().__new__(mcls, name, bases, namespace, **kwargs)


#: Instances of a class built by `_bind` before the class gets its own generated ``__init__``:
#: generating one costs about 0.1 ms (source compiled), binding about 2 us an instance, and
#: most record classes a `skillpack check` or a first turn meets are built a few times.
_GENERATE_AFTER = 8


def _first_init(self: Record, *args: Any, **kwargs: Any) -> None:
    """Bind the arguments (`_bind`) for a class's first instances; then, or for arguments
    `_bind` leaves to Python (a missing, unexpected or repeated one: its own TypeError),
    generate the class's ``__init__`` (as dataclasses does), install it, and run it."""
    cls = type(self)
    built = cls.__dict__.get("_built", 0)
    if built < _GENERATE_AFTER and _bind(self, cls, args, kwargs):
        type.__setattr__(cls, "_built", built + 1)
        return
    fields, defaults, factories = cls._fields, cls._defaults, cls._factories
    params = ", ".join(f"{f}=_d[{f!r}]" if f in defaults else f for f in fields)
    scope: dict[str, Any] = {"_set": _setattr, "_d": defaults, "_f": factories, "_M": _MISSING}
    setters = []
    for at, f in enumerate(fields):
        slot = _slot(cls, f)
        if slot is None:
            setters.append(f"_set(self, {f!r}, ")
        else:  # the slot's own setter: what object.__setattr__ finds and calls, found once
            scope[f"_s{at}"] = slot.__set__
            setters.append(f"_s{at}(self, ")
    body = "".join(
        f"\n    {put}_f[{f!r}]() if {f} is _M else {f})" if f in factories
        else f"\n    {put}{f})" for put, f in zip(setters, fields, strict=True)) or "\n    pass"
    if hasattr(cls, "__post_init__"):
        body += "\n    self.__post_init__()"
    exec(f"def __init__(self, {params}):{body}", scope)  # field names from our own classes
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", init)
    init(self, *args, **kwargs)


_SLOT = type(_Field.__dict__["default"])  # the type of a __slots__ entry's descriptor


def _slot(cls: type, name: str) -> Any:
    """The slot descriptor object.__setattr__ would set the attribute `name` of an instance of
    `cls` through (the first class of its MRO defining `name`), or None when that is not a
    slot (its generated ``__init__`` then calls object.__setattr__)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            return found if type(found) is _SLOT else None
    return None


def _bind(self: Record, cls: type[Record], args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> bool:
    """Set the fields from `args` and `kwargs` as the generated ``__init__`` would, and run
    ``__post_init__``; False, having run nothing of the class's, when the arguments do not
    bind (the generated ``__init__`` then raises Python's own error)."""
    fields = cls._fields
    if len(args) > len(fields):
        return False
    defaults, factories = cls._defaults, cls._factories
    values = list(args)
    used = 0
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs[name])
            used += 1
        elif name in defaults:
            values.append(defaults[name])
        else:
            return False
    if used != len(kwargs):
        return False
    for name, value in zip(fields, values, strict=True):
        _setattr(self, name, factories[name]() if value is _MISSING else value)
    post_init = getattr(cls, "__post_init__", None)
    if post_init is not None:
        post_init(self)
    return True


class Record(metaclass=_RecordType):
    """Base of a frozen record: declare fields as annotations, as on a frozen dataclass."""

    __slots__ = ()

    if TYPE_CHECKING:
        _fields: ClassVar[tuple[str, ...]]
        _defaults: ClassVar[dict[str, Any]]
        _factories: ClassVar[dict[str, Any]]
        _uncompared: ClassVar[frozenset[str]]
        _unshown: ClassVar[frozenset[str]]
        _compared: ClassVar[tuple[str, ...] | None]  # None: every field
        _shown: ClassVar[tuple[str, ...]]

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, f) for f in self._fields])

    def _compared_values(self) -> tuple[Any, ...]:
        compared = self._compared
        if compared is None:
            return tuple([getattr(self, f) for f in self._fields])
        return tuple([getattr(self, f) for f in compared])

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._shown)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__ and isinstance(other, Record):
            return self._compared_values() == other._compared_values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._compared_values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise _frozen(name, "assign to")

    def __delattr__(self, name: str) -> None:
        raise _frozen(name, "delete")

    def __reduce__(self) -> tuple[type[Record], tuple[Any, ...]]:
        return type(self), self._values()
