"""The node base every intrinsic function (HOT and CFN) is built on.

A template is parsed once into a tree in which every ``{fn_name: args}`` mapping whose
key the template version knows becomes a :class:`Function` node; everything else stays
plain ``dict``/``list``/scalar data. The tree is immutable after parsing and shared by
every stack that uses the template, so a node never stores per-stack state: what it
needs at resolution time comes from the :class:`ResolveContext` it is given.

How to add a function
---------------------
1. Subclass :class:`Function` (one small module per group: ``kiln/template/hot/...`` or
   ``kiln/template/cfn/...``).
2. Override :meth:`Function.validate` to check the *shape* of ``self.args`` (raise with
   :meth:`Function.arg_error`, which attaches ``self.path``): the checks Heat makes
   when it *parses* a template (its function constructors), which apply to every
   resource, even one whose condition is false. Checks Heat only makes when it
   *validates* a resource that exists (its ``Function.validate``: not for a disabled
   resource, an external one, or an ``OS::Heat::None`` at create) go in
   :meth:`Function.validate_existing`. Nested nodes are validated by the tree walker,
   not by you.
3. Override :meth:`Function.result`: resolve arguments with ``ctx.resolve(arg)`` (never
   look inside nested nodes yourself) and return plain data.
4. If the node refers to resources, set ``touches_resources = True`` on the class (so its
   value is never memoised) and override :meth:`Function.dependencies` to yield the
   names it refers to; nothing else in the tree needs to know.
5. Register it in a version table (see :mod:`kiln.template.versions`):
   ``version("heat_template_version", "2016-10-14").add_functions({"yaql": Yaql})``.
   Newer versions inherit it; a version that drops it maps the name to :class:`Removed`.

Arguments are already parsed when a node is constructed (the parser builds the tree
bottom-up without recursion), so ``self.args`` may contain nested nodes. Constructors
never raise: all argument checking is in ``validate`` so one bad function can be
reported with its path instead of aborting the parse.

When checks run (Heat's order, see :mod:`kiln.template.checks`): ``validate`` at load
for resources, conditions and outputs without a condition; for an output with a
condition only if the condition holds for the stack; and for the branches of ``if``
(a node with :attr:`Function.branch_args`) only in the branch the condition picks,
when the template is bound to a stack. :meth:`Function.prepare` runs at load for every
node, in any branch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from kiln.errors import PathElement
from kiln.template.errors import StackValidationFailed, TemplateError

if TYPE_CHECKING:
    from kiln.template.definitions import ResourceResolver, StackIdentity
    from kiln.template.versions import TemplateVersion

Path = tuple[PathElement, ...]


class _Omitted:
    """The value of an ``if`` branch that asks for the key/item to be left out."""

    _instance: ClassVar[_Omitted | None] = None

    def __new__(cls) -> _Omitted:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "OMITTED"

    def __bool__(self) -> bool:
        return False


#: Returned by a function to ask the enclosing map/list to drop this entry (Heat 2021-04-16
#: ``if`` with a null branch). Containers remove it while resolving.
OMITTED: Any = _Omitted()


class ResolveContext(Protocol):
    """What a node may ask of the stack it is being resolved for."""

    @property
    def version(self) -> TemplateVersion: ...

    @property
    def resolver(self) -> ResourceResolver: ...

    @property
    def identity(self) -> StackIdentity: ...

    @property
    def files(self) -> Mapping[str, str]: ...

    @property
    def mappings(self) -> Mapping[str, Any]: ...

    @property
    def yaql_limits(self) -> tuple[int, int]:
        """(limit_iterators, memory_quota)."""
        ...

    @property
    def yaql_timeout(self) -> float:
        """Seconds one yaql evaluation may run (see :mod:`kiln.template.yaql_sandbox`)."""
        ...

    @property
    def max_output(self) -> int:
        """The largest result one function may build (see :mod:`kiln.template.limits`)."""
        ...

    def resolve(self, node: Any, nullable: bool = False) -> Any:
        """Resolve nested data or nodes to plain data (memoised where allowed).

        Map entries and list items whose value is :data:`OMITTED` are dropped; at the top
        level OMITTED becomes None unless ``nullable`` (then it is passed up, so an
        enclosing container can drop the entry).
        """
        ...

    def parameter(self, name: str) -> Any:
        """The typed value of a template or pseudo parameter; KeyError if unknown."""
        ...

    def parameter_names(self) -> list[str]:
        """Every name :meth:`parameter` knows (for a misspelt name's suggestion)."""
        ...

    def condition(self, name: Any) -> bool:
        """Heat's ``is_enabled``: None → True, a bool as is, a condition name → its
        value. Raises ValueError (``Invalid condition "x"``) otherwise; callers attach
        their path."""
        ...

    def resource_enabled(self, name: str) -> bool:
        """False for a resource whose condition is false (it does not exist)."""
        ...


class ValidateContext(Protocol):
    """What static (stack-independent) validation may ask of the template."""

    @property
    def version(self) -> TemplateVersion: ...

    @property
    def resource_names(self) -> Sequence[str]: ...

    @property
    def parameter_names(self) -> Sequence[str]: ...

    @property
    def condition_names(self) -> Sequence[str]: ...

    @property
    def mappings(self) -> Mapping[str, Any]: ...


class Function:
    """One intrinsic function call in a parsed template.

    ``fn_name`` is the key as written (``get_attr``, ``Fn::GetAtt``); ``args`` its parsed
    value; ``path`` where it sits in the template (``("resources", "a", "properties",
    "x")``) so its errors name the place.
    """

    __slots__ = ("args", "fn_name", "path", "touches", "walk")

    #: What the template_functions API shows for this function (Heat 27's text, as
    #: observed on its API, so listings match).
    api_description: ClassVar[str] = ""

    #: Indexes of list arguments parsed with the version's *condition* table (``if``'s
    #: first argument is a condition, so ``equals`` etc. work there).
    condition_args: ClassVar[tuple[int, ...]] = ()

    #: True if resolving this node itself reads resource state (get_resource, get_attr,
    #: Ref to a resource, ...). A node touches resources if it or any child does; such
    #: nodes are re-resolved every time, all others are memoised per BoundTemplate.
    touches_resources: ClassVar[bool] = False

    #: True if the node must be looked at when a stack validates the template even
    #: though it reads no resource (``if`` checks its condition name there, as Heat's
    #: macro does). ``walk`` is then set on it and on every node above it.
    stack_checked: ClassVar[bool] = False

    #: True for a node whose arguments other than :attr:`condition_args` are branches
    #: that Heat parses only when its condition picks them (``if``, a macro in Heat):
    #: functions inside them are checked for the branch a stack picks, not at load.
    #: Such a node offers ``chosen(ctx)`` (the picked branch, or OMITTED).
    branch_args: ClassVar[bool] = False

    #: Set for classes that override :meth:`validate_existing` (see __init_subclass__),
    #: so the parser can note the few nodes that need it; likewise for ``prepare`` and
    #: ``validate``, so the parser calls only what does something.
    has_existing_checks: ClassVar[bool] = False
    has_prepare: ClassVar[bool] = False
    has_validate: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.has_existing_checks = cls.validate_existing is not Function.validate_existing
        cls.has_prepare = cls.prepare is not Function.prepare
        cls.has_validate = cls.validate is not Function.validate

    def __init__(self, fn_name: str, args: Any, path: Path = (),
                 children: Sequence[Function] | None = None) -> None:
        """``children``: the function nodes directly inside ``args``, if the caller
        already knows them (the parser does); found here otherwise."""
        self.fn_name = fn_name
        self.args = args
        self.path = path
        if children is None:
            children = child_nodes(args)
        touches = self.touches_resources
        walk = self.stack_checked
        for child in children:
            touches = touches or child.touches
            walk = walk or child.walk
        self.touches: bool = touches
        #: whether stack validation must visit this subtree (references or ``if``)
        self.walk: bool = touches or walk

    # -- the contract -------------------------------------------------------------------

    def prepare(self, ctx: ValidateContext) -> None:
        """Settle, once at load, what the node needs to know about the template (a
        CFN ``Ref``: parameter or resource). Runs for every node, in any branch, before
        its parent is built; never raises."""

    def validate(self, ctx: ValidateContext) -> None:
        """Check the shape of the arguments as Heat does when it parses the template;
        nested nodes are validated separately."""

    def validate_existing(self, ctx: ValidateContext) -> None:
        """The checks Heat makes only when it validates a resource (or output) that
        exists in the stack; nested nodes are validated separately."""

    def result(self, ctx: ResolveContext) -> Any:
        """The resolved value (plain data) for the stack behind ``ctx``."""
        return {self.fn_name: ctx.resolve(self.args)}

    def dependencies(self, ctx: ResolveContext | None = None) -> Iterator[str]:
        """Names of resources this node itself refers to (not its children).

        Without ``ctx`` only literal names count (the template-wide view); with it, a
        name computed from parameters is resolved too.
        """
        return iter(())

    def dependency_args(self, ctx: ResolveContext | None = None) -> Any:
        """The part of ``args`` whose references count (``if`` narrows it to the branch
        its condition picks, as Heat does)."""
        return self.args

    def check_references(self, ctx: ResolveContext) -> None:
        """Complain about references to resources that do not exist (or are disabled)
        the way Heat's stack validation does; called for every node of an enabled
        resource or output."""

    # -- helpers ------------------------------------------------------------------------

    def error(self, message: str, cls: type[TemplateError] = StackValidationFailed,
              ) -> TemplateError:
        """A resolution error at this node's place, for ``raise self.error(...)``."""
        return cls(message, path=self.path)

    def arg_error(self, message: str) -> TemplateError:
        """A shape error found by :meth:`validate`; Heat puts the function name on the
        path (``resources.r.properties.v.list_join: Incorrect arguments ...``)."""
        return StackValidationFailed(message, path=(*self.path, self.fn_name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fn_name!r}, {self.args!r})"

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self)
                and self.fn_name == other.fn_name
                and self.args == other.args)

    def __hash__(self) -> int:
        return hash((type(self), self.fn_name))


#: HOT's function for a CloudFormation one that newer HOT versions dropped
HOT_INSTEAD = {"Fn::Join": "list_join", "Fn::Replace": "str_replace",
               "Fn::Split": "str_split", "Fn::ResourceFacade": "resource_facade",
               "Ref": "get_resource or get_param"}


class Removed(Function):
    """A function an older version had and this version dropped: an error where a stack
    validates it. Heat 27 accepts it in a disabled resource or an OS::Heat::None, and an
    OS::Heat::None's metadata then shows it as written (``{"Fn::Join": [...]}``)."""

    __slots__ = ()

    def validate_existing(self, ctx: ValidateContext) -> None:
        error = self.arg_error("The template version is invalid: The function "
                               f"{self.fn_name} is not supported in this version of HOT.")
        instead = HOT_INSTEAD.get(self.fn_name)
        if instead:
            error.hint = f"did you mean {instead}? (HOT's function for {self.fn_name})"
        raise error

    def result(self, ctx: ResolveContext) -> Any:
        # Heat returns the unresolved arguments (and then cannot store a nested
        # function); Kiln resolves them so the value is plain data
        return {self.fn_name: ctx.resolve(self.args)}


class Invalid(Function):
    """A function that exists in the version but may not appear where it was used
    (e.g. ``get_resource`` inside the ``conditions`` section)."""

    __slots__ = ()

    def validate(self, ctx: ValidateContext) -> None:
        raise self.arg_error(f'The function "{self.fn_name}" is invalid in this context')

    def result(self, ctx: ResolveContext) -> Any:
        raise self.arg_error(f'The function "{self.fn_name}" is invalid in this context')


def direct_children(data: Any) -> Iterator[Function]:
    """The function nodes directly inside ``data`` (a node's args), not below them."""
    return iter(child_nodes(data))


def child_nodes(data: Any) -> list[Function]:
    """:func:`direct_children` as a list (the parser's hot path)."""
    t = type(data)
    if t is not dict and t is not list:
        return [data] if isinstance(data, Function) else []
    found: list[Function] = []
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is dict:
            for v in item.values():
                tv = type(v)
                if tv is dict or tv is list:
                    stack.append(v)
                elif isinstance(v, Function):
                    found.append(v)
        elif t is list:
            for v in item:
                tv = type(v)
                if tv is dict or tv is list:
                    stack.append(v)
                elif isinstance(v, Function):
                    found.append(v)
        elif isinstance(item, Function):
            found.append(item)
    return found


def dependencies(data: Any, ctx: ResolveContext | None = None) -> set[str]:
    """All resource names referred to anywhere in ``data`` (see Function.dependencies)."""
    out: set[str] = set()
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, Function):
            out.update(item.dependencies(ctx))
            stack.append(item.dependency_args(ctx))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return out


def touches_resources(data: Any) -> bool:
    """True if resolving ``data`` reads resource state (so it must not be memoised)."""
    return any(n.touches for n in direct_children(data))
