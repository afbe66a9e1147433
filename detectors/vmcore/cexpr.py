"""A small parser for the conditions of ``BUG_ON()``/``WARN_ON()`` and friends.

Kernel assertions are plain C expressions over the function's variables:
``pool->used >= pool->limit``, ``!list_empty(&s->node)``, ``atomic_read(&b->refs) <= 0``.
This module finds the macro on a source line, parses its condition (identifiers,
``->``/``.`` member chains, array indexes, unary ``! * & - ~``, comparisons, arithmetic,
bit operators, ``&&``/``||``, calls), lists the operands whose values decide it, and
evaluates the expression once those values are known.  It imports neither drgn nor the
detectors, so both the drgn adapter (which reads the operands from the dump) and the
detectors (which judge the condition) use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: Assertion macros and which argument is the condition (all: the first).
#: Ordered longest first so ``WARN_ON_ONCE`` is not read as ``WARN_ON``.
ASSERT_MACROS = (
    "BUG_ON_DATA_CORRUPTION",
    "CHECK_DATA_CORRUPTION",
    "WARN_ON_ONCE",
    "WARN_ONCE",
    "WARN_ON",
    "BUG_ON",
    "WARN",
    "VM_BUG_ON",
)

#: Kernel macros that are no DWARF symbol (without -g3) but appear in conditions.
KNOWN_MACROS: dict[str, int] = {
    "NULL": 0,
    "true": 1,
    "false": 0,
    "LIST_POISON1": 0xDEAD000000000100,
    "LIST_POISON2": 0xDEAD000000000122,
}

#: Calls that only read their argument: the value is the argument's (or its ``counter``).
TRANSPARENT_CALLS = frozenset({"likely", "unlikely", "READ_ONCE", "data_race"})
COUNTER_CALLS = frozenset({"atomic_read", "atomic_long_read", "atomic64_read", "refcount_read", "arch_atomic_read"})

_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>->|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>!~&|^()\[\].,?:]))"
)


class ParseError(ValueError):
    """The text is not an expression this parser reads."""


@dataclass(frozen=True)
class Node:
    """An expression node; ``text`` is its canonical C spelling."""

    kind: str  # name, num, member, index, unary, binary, call, cond
    text: str
    parts: tuple[Node, ...] = ()
    op: str = ""
    value: int | None = None  # for num


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ParseError(f"cannot read {text[pos : pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup or "op"
        out.append((kind, m.group(kind)))
    return out


_BINARY = (
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ParseError("unexpected end of expression")
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise ParseError(f"expected {want!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def expression(self) -> Node:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take("?")
            yes = self.expression()
            self.take(":")
            no = self.expression()
            return Node("cond", f"{cond.text} ? {yes.text} : {no.text}", (cond, yes, no))
        return cond

    def binary(self, level: int) -> Node:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = Node("binary", f"{left.text} {op} {right.text}", (left, right), op)
        return left

    def unary(self) -> Node:
        tok = self.peek()
        if tok in ("!", "-", "~", "*", "&", "+"):
            self.take()
            inner = self.unary()
            return Node("unary", f"{tok}{inner.text}", (inner,), str(tok))
        if tok == "(" and self._is_cast():
            self.take("(")
            while self.take()[1] != ")":
                pass
            return self.unary()  # a cast does not change which value decides the condition
        return self.postfix()

    def _is_cast(self) -> bool:
        """``(unsigned long)x`` / ``(struct foo *)p``: a type name in parentheses."""
        j = self.i + 1
        words = []
        while j < len(self.toks) and self.toks[j][1] != ")":
            if self.toks[j][0] == "name" or self.toks[j][1] == "*":
                words.append(self.toks[j][1])
                j += 1
            else:
                return False
        types = {"unsigned", "signed", "int", "long", "short", "char", "struct", "union", "enum", "void", "bool"}
        return bool(words) and (words[0] in types or words[-1] == "*" or words[0].endswith("_t"))

    def postfix(self) -> Node:
        node = self.primary()
        while True:
            tok = self.peek()
            if tok in ("->", "."):
                self.take()
                kind, name = self.take()
                if kind != "name":
                    raise ParseError(f"expected a member name after {tok}")
                node = Node("member", f"{node.text}{tok}{name}", (node,), f"{tok}{name}")
            elif tok == "[":
                self.take("[")
                index = self.expression()
                self.take("]")
                node = Node("index", f"{node.text}[{index.text}]", (node, index))
            elif tok == "(" and node.kind == "name":
                self.take("(")
                args: list[Node] = []
                while self.peek() != ")":
                    args.append(self.expression())
                    if self.peek() == ",":
                        self.take(",")
                self.take(")")
                node = Node("call", f"{node.text}({', '.join(a.text for a in args)})", tuple(args), node.text)
            else:
                return node

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            return Node("num", text, value=int(text.rstrip("uUlL"), 0))
        if kind == "name":
            return Node("name", text)
        if text == "(":
            inner = self.expression()
            self.take(")")
            return Node(inner.kind, f"({inner.text})" if inner.kind in ("binary", "cond") else inner.text,
                        inner.parts, inner.op, inner.value)  # fmt: skip
        raise ParseError(f"unexpected {text!r}")


def parse(text: str) -> Node:
    """Parse a C expression; raises :class:`ParseError` on text it does not read."""
    parser = _Parser(text)
    node = parser.expression()
    if parser.peek() is not None:
        raise ParseError(f"unexpected {parser.peek()!r} after {node.text!r}")
    return node


def member_name(node: Node) -> str:
    """The member a ``member`` node selects (``used`` of ``pool->used``)."""
    return node.op.removeprefix("->").removeprefix(".")


def is_arrow(node: Node) -> bool:
    """Whether a ``member`` node goes through a pointer (``->``)."""
    return node.op.startswith("->")


@dataclass(frozen=True)
class Assertion:
    """An assertion macro found on a source line."""

    macro: str  # BUG_ON, WARN_ON, ...
    condition: str  # the condition's text as written


def balanced(text: str, start: int) -> int | None:
    """Index of the parenthesis closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _first_argument(args: str) -> str:
    depth = 0
    for i, ch in enumerate(args):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            return args[:i]
    return args


def find_assertion(source: str) -> Assertion | None:
    """The first assertion macro in ``source`` (one statement, possibly several lines)."""
    for macro in ASSERT_MACROS:
        for m in re.finditer(rf"\b{macro}\s*\(", source):
            close = balanced(source, m.end() - 1)
            if close is None:
                continue
            args = source[m.end() : close]
            return Assertion(macro, " ".join(_first_argument(args).split()))
    return None


def operands(node: Node) -> list[Node]:
    """The value-carrying leaves of an expression: variables, member chains, indexes, derefs, reads.

    Number literals and known macros are not operands; a ``&x`` argument of a
    counter read (``atomic_read(&b->refs)``) makes the read itself the operand.
    """
    out: dict[str, Node] = {}

    def walk(n: Node) -> None:
        if n.kind == "num" or (n.kind == "name" and n.text in KNOWN_MACROS):
            return
        if n.kind in ("name", "member", "index") or (n.kind == "unary" and n.op == "*"):
            out.setdefault(n.text, n)
            if n.kind == "index":
                walk(n.parts[1])
            return
        if n.kind == "call" and (n.op in COUNTER_CALLS or n.op == "test_bit"):
            out.setdefault(n.text, n)
            if n.op == "test_bit" and len(n.parts) == 2 and n.parts[1].kind == "unary" and n.parts[1].op == "&":
                walk(n.parts[1].parts[0])  # the polled word itself: test_bit(0, &word) -> word
            return
        if n.kind == "call" and n.op in TRANSPARENT_CALLS and n.parts:
            walk(n.parts[0])
            return
        for part in n.parts:
            walk(part)

    walk(node)
    return list(out.values())


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_OPS: dict[str, Callable[[int, int], int]] = {
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    ">": lambda a, b: int(a > b),
    "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b),
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else 0,
    "%": lambda a, b: a % b if b else 0,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


def evaluate(node: Node, values: Mapping[str, int]) -> int | None:
    """The value of the expression given its operands' values; None when one is unknown.

    ``&&``/``||`` short-circuit as in C, so an unknown operand that does not
    matter does not make the result unknown.
    """
    if node.kind == "num":
        return node.value
    if node.text in values:
        return values[node.text]
    if node.kind == "name":
        return KNOWN_MACROS.get(node.text)
    if node.kind == "call" and node.op in TRANSPARENT_CALLS and node.parts:
        return evaluate(node.parts[0], values)
    if node.kind == "unary":
        inner = evaluate(node.parts[0], values)
        if inner is None:
            return None
        return {"!": int(not inner), "-": -inner, "~": ~inner, "+": inner}.get(node.op)
    if node.kind == "binary":
        left = evaluate(node.parts[0], values)
        if node.op in ("&&", "||"):
            if left is not None and (bool(left) is (node.op == "||")):
                return int(node.op == "||")
            right = evaluate(node.parts[1], values)
            if right is not None and (bool(right) is (node.op == "||")):
                return int(node.op == "||")
            return None if left is None or right is None else int(bool(right))
        right = evaluate(node.parts[1], values)
        if left is None or right is None:
            return None
        if node.op in ("<", ">", "<=", ">=") and (left >= 1 << 63 or right >= 1 << 63):
            left, right = _signed(left), _signed(right)
        return _OPS[node.op](left, right)
    if node.kind == "cond":
        cond = evaluate(node.parts[0], values)
        if cond is None:
            return None
        return evaluate(node.parts[1] if cond else node.parts[2], values)
    return None
