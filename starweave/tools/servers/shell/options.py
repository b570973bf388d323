"""Parse a command's options the way the tool itself parses them.

Most tools read their options with glibc's ``getopt_long``: short options bundle (``-xvf archive``,
``-n5``, ``-vS'sh -c x'``), a short option takes its value from the rest of its word or from the next
word, long options take ``--opt=value`` or ``--opt value``, a long option may be abbreviated to any
unique prefix (``--outp`` is ``--output``), ``--`` ends the options and, unless the option string
starts with ``+``, options may follow operands (permutation). An :class:`OptSpec` holds one tool's
real option table (generated from the tool's own source or ``getopt`` tables and checked against its
``--help`` by the tests), and :func:`parse_options` applies it.

The policy only lets a command run when every option is in the table: an unknown option, an ambiguous
abbreviation or a missing value is refused with a message naming it. So an option the policy does not
know (``sort --compress-program``'s abbreviation, ``tar --checkpoint-act``) can never slip through as
an operand, and an abbreviation always means for the policy what it means for the tool: the table is
a subset of the tool's options, so a prefix unique in the tool is unique (and the same) here, and a
prefix the tool finds ambiguous makes the tool fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starweave.errors import PolicyViolation

NONE, REQUIRED, OPTIONAL = 0, 1, 2


@dataclass(frozen=True)
class OptSpec:
    """One tool's options: ``short`` maps a letter and ``long`` a name (without dashes) to its arity
    (NONE, REQUIRED or OPTIONAL value).

    ``permute``: options may follow operands (GNU default); False stops at the first operand (a
    ``+`` option string: wrappers such as env, xargs, nice). ``long_only``: ``-name`` is tried as a
    long option first (``getopt_long_only``). ``negative_numbers``: a word like ``-5`` or ``-.5`` is an
    operand and ends the options (seq). ``free``: the tool parses no options (echo, printf, test);
    every word is an operand."""

    short: dict[str, int] = field(default_factory=dict)
    long: dict[str, int] = field(default_factory=dict)
    permute: bool = True
    long_only: bool = False
    negative_numbers: bool = False
    free: bool = False


def gnu(short: str = "", long: str = "", **flags: bool) -> OptSpec:
    """An :class:`OptSpec` from a getopt option string (``"ab:c::"``: ``b`` needs a value, ``c`` takes
    an optional one attached; a leading ``+`` stops at the first operand) and a space-separated list of
    long options (``name``, ``name=`` for a required value, ``name=?`` for an optional one)."""
    permute = flags.pop("permute", True)
    if short.startswith("+"):
        permute, short = False, short[1:]
    elif short.startswith("-"):
        short = short[1:]  # "-": operands come back in order; for us the same as permuting
    shorts: dict[str, int] = {}
    i = 0
    while i < len(short):
        ch = short[i]
        arity = NONE
        if short.startswith("::", i + 1):
            arity, i = OPTIONAL, i + 3
        elif short.startswith(":", i + 1):
            arity, i = REQUIRED, i + 2
        else:
            i += 1
        shorts[ch] = arity
    longs: dict[str, int] = {}
    for item in long.split():
        if item.endswith("=?"):
            longs[item[:-2]] = OPTIONAL
        elif item.endswith("="):
            longs[item[:-1]] = REQUIRED
        else:
            longs[item] = NONE
    return OptSpec(shorts, longs, permute=permute, **flags)


FREE = OptSpec(free=True)


@dataclass
class Args:
    """Parsed options (``(name, value)`` with ``-x`` or ``--full-name``, in order) and operands.

    ``dashdash`` is the index (in the parsed words) of the ``--`` that ended the options, if any:
    options injected by a rule must go before it."""

    opts: list[tuple[str, str | None]] = field(default_factory=list)
    pos: list[str] = field(default_factory=list)
    dashdash: int | None = None
    # Options and operands in command-line order; an operand is ("", word). For tools where order
    # matters (tar's cumulative -C).
    seq: list[tuple[str, str | None]] = field(default_factory=list)

    def add_opt(self, name: str, value: str | None) -> None:
        """Record one option."""
        self.opts.append((name, value))
        self.seq.append((name, value))

    def add_pos(self, words: list[str]) -> None:
        """Record operands."""
        self.pos.extend(words)
        self.seq.extend(("", w) for w in words)

    def has(self, *names: str) -> bool:
        """True when any of ``names`` was given."""
        return any(name in names for name, _ in self.opts)

    def values(self, *names: str) -> list[str]:
        """The values given to any of ``names``, in order."""
        return [v for name, v in self.opts if name in names and v is not None]


def _refuse(tool: str, what: str) -> PolicyViolation:
    return PolicyViolation(f"{tool}: {what}; see {tool} --help")


def resolve_long(tool: str, spec: OptSpec, name: str) -> str | None:
    """The full long option ``name`` stands for (exact or unique prefix), or None when unknown;
    an ambiguous prefix is refused."""
    if name in spec.long:
        return name
    matches = [full for full in spec.long if full.startswith(name)]
    if len(matches) > 1:
        shown = ", ".join(f"--{m}" for m in sorted(matches)[:6])
        raise _refuse(tool, f"--{name} is ambiguous ({shown}); write the option in full")
    return matches[0] if matches else None


def _take_long(
    tool: str, spec: OptSpec, word: str, dashes: int, nxt: str | None
) -> tuple[tuple[str, str | None], bool] | None:
    """Parse a long option word; returns ((name, value), consumed_next) or None when it is not one
    (only for ``long_only``)."""
    name, eq, value = word[dashes:].partition("=")
    full = resolve_long(tool, spec, name)
    if full is None:
        if dashes == 1:
            return None
        raise _refuse(tool, f"unknown option --{name}")
    arity = spec.long[full]
    if arity == NONE:
        if eq:
            raise _refuse(tool, f"option --{full} takes no value")
        return (f"--{full}", None), False
    if eq:
        return (f"--{full}", value), False
    if arity == REQUIRED:
        if nxt is None:
            raise _refuse(tool, f"option --{full} needs a value")
        return (f"--{full}", nxt), True
    return (f"--{full}", None), False


def _take_short(
    tool: str, spec: OptSpec, word: str, nxt: str | None
) -> tuple[list[tuple[str, str | None]], bool]:
    """Parse a bundle of short options (``-xvf``); returns the options and whether the next word was
    used as a value."""
    out: list[tuple[str, str | None]] = []
    j = 1
    while j < len(word):
        ch = word[j]
        if ch not in spec.short:
            shown = repr(ch) if not ch.isprintable() or ch in " '\"" else ch
            raise _refuse(tool, f"unknown option -{shown}" + (f" (in {word})" if len(word) > 2 else ""))
        arity = spec.short[ch]
        if arity == NONE:
            out.append((f"-{ch}", None))
            j += 1
            continue
        rest = word[j + 1 :]
        if rest:
            out.append((f"-{ch}", rest))
            return out, False
        if arity == REQUIRED:
            if nxt is None:
                raise _refuse(tool, f"option -{ch} needs a value")
            out.append((f"-{ch}", nxt))
            return out, True
        out.append((f"-{ch}", None))
        return out, False
    return out, False


def _negative_number(word: str) -> bool:
    return len(word) > 1 and word[0] == "-" and (word[1].isdigit() or word[1] == ".")


def parse_options(tool: str, words: list[str], spec: OptSpec) -> Args:
    """Split ``words`` (the arguments, without the command name) as ``tool`` would with ``spec``;
    raise PolicyViolation for an unknown option, an ambiguous abbreviation or a missing value."""
    out = Args()
    if spec.free:
        out.add_pos(list(words))
        return out
    i = 0
    while i < len(words):
        word = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if word == "--":
            out.dashdash = i
            out.add_pos(words[i + 1 :])
            break
        if word == "-" or not word.startswith("-") or (spec.negative_numbers and _negative_number(word)):
            if not spec.permute:
                out.add_pos(words[i:])
                break
            out.add_pos([word])
            i += 1
            continue
        if word.startswith("--"):
            taken = _take_long(tool, spec, word, 2, nxt)
            assert taken is not None
            opt, used = taken
            out.add_opt(*opt)
            i += 2 if used else 1
            continue
        if spec.long_only and len(word) > 2:
            taken = _take_long(tool, spec, word, 1, nxt)
            if taken is not None:
                opt, used = taken
                out.add_opt(*opt)
                i += 2 if used else 1
                continue
        opts, used = _take_short(tool, spec, word, nxt)
        for opt in opts:
            out.add_opt(*opt)
        i += 2 if used else 1
    return out


def insert_options(argv: list[str], args: Args, extra: list[str]) -> list[str]:
    """``argv`` with ``extra`` options added before the ``--`` that ended the options, or at the end
    (GNU tools permute, so options after operands still count)."""
    if args.dashdash is not None:
        cut = 1 + args.dashdash
        return [*argv[:cut], *extra, *argv[cut:]]
    return [*argv, *extra]
