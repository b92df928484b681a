"""``sourcebsp edit-entities MAP -o OUT [rules...]``: change entities by simple rules.

One rule can be given on the command line::

    sourcebsp edit-entities map.bsp -o out.bsp --match-class light --set _light="255 0 0 200"
    sourcebsp edit-entities map.bsp -o out.bsp --match-name "door_*" --delete
    sourcebsp edit-entities map.bsp -o out.bsp --add "classname=info_target,targetname=x,origin=0 0 0"

and any number in a JSON file (``--rules FILE``, format in :data:`RULES_HELP`),
applied in order before the command-line rule; or the whole entity lump from
a ``.ent`` text file (``--from-ent``, as ``entities MAP --ent`` writes it).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any, NamedTuple, Sequence

from ..codecs.entities import Entities, Output
from ..lump_ids import LumpId
from ..opening import open as open_map
from . import _common
from .entities import read_ent_file


RULES_HELP = """\
rules file (--rules FILE): a JSON list of rules (or one rule object), applied
in order, each to the entities as the rules before it left them. A rule's keys:

  "match": {"KEY": "PATTERN", ...}  entities whose every KEY matches its PATTERN
                                    (case-insensitive, * is a wildcard)
  "all": true                       every entity instead (worldspawn included)
  "rename": {"OLD": "NEW", ...}     rename keys of the matched entities
  "set": {"KEY": "VALUE", ...}      set a key (replacing every pair of that key)
  "delete_keys": ["KEY", ...]       remove every pair of these keys
  "add_outputs": ["OnTrigger=target,input,parameter,delay,times", ...]
                                    append outputs (written with the map's separator)
  "delete": true                    delete the matched entities
  "add": {"classname": "...", ...}  add a new entity (or a list of [key, value]
                                    pairs, or a list of several entities)

The edits of one rule run in the order above. A rule that changes or deletes
needs "match" or "all"; "add" needs neither. Values may be strings or numbers.
Example (docs/rules_example.json in the source tree):

  [
    {"match": {"classname": "light"}, "set": {"_light": "255 200 150 300"}},
    {"match": {"classname": "info_player_teamspawn"}, "delete": true},
    {"add": {"classname": "info_target", "targetname": "x", "origin": "0 0 64"}}
  ]
"""


class RuleError(ValueError):
    """A rule that cannot be applied (bad syntax or shape)."""


class Rule(NamedTuple):
    """One rule, as read from a rules file or the command line (not a dataclass: the
    command would import ``dataclasses`` and ``inspect`` for it)."""

    match: dict[str, str]
    all: bool
    set: list[tuple[str, str]]
    rename: list[tuple[str, str]]
    delete_keys: list[str]
    add_outputs: list[str]
    delete: bool
    add: list[list[tuple[str, str]]]

    @property
    def edits(self) -> bool:
        return bool(self.set or self.rename or self.delete_keys or self.add_outputs or self.delete)

    def check(self, where: str) -> None:
        if self.edits and not self.match and not self.all:
            raise RuleError(f"{where}: a rule that changes or deletes entities needs a match "
                            "(--match-class, --match-name, --match) or --all")
        if self.all and self.match:
            raise RuleError(f"{where}: give either a match or all, not both")


class Report:
    """What the rules did: entities matched, changed, deleted and added."""

    def __init__(self) -> None:
        self.matched = self.changed = self.deleted = self.added = 0


def split_assignment(text: str, what: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value); the value may contain '='."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise RuleError(f"{what} {text!r} is not KEY=VALUE")
    return key, value


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """An entity for ``--add``: ``k=v,k=v`` or a JSON object / list of pairs."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise RuleError(f"--add: bad JSON: {exc}") from exc
        return _pairs_from_json(value, "--add")
    return [split_assignment(part, "--add item") for part in text.split(",") if part.strip()]


def _pairs_from_json(value: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
        items = [tuple(p) for p in value]
    else:
        raise RuleError(f"{where}: expected an object or a list of [key, value] pairs")
    for k, v in items:
        if not isinstance(k, str) or not isinstance(v, (str, int, float)):
            raise RuleError(f"{where}: keys must be strings and values strings or numbers, got {k!r}: {v!r}")
    return [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in items]


def parse_output(text: str, separator: str) -> tuple[str, str]:
    """``OnTrigger=target,input[,parameter[,delay[,times]]]`` -> (key, value) with the
    map's separator.  The parameter may contain commas when delay and times are given."""
    name, fields = split_assignment(text, "--add-output")
    parts = fields.split(",", 2)
    if len(parts) < 2:
        raise RuleError(f"--add-output {text!r}: give at least target,input")
    target, input_ = parts[0], parts[1]
    parameter, delay, times = "", "0", "-1"
    if len(parts) == 3:
        rest = parts[2].rsplit(",", 2)
        parameter = rest[0]
        if len(rest) > 1:
            delay = rest[1]
        if len(rest) > 2:
            times = rest[2]
    try:
        output = Output.make(name, target, input_, parameter, delay, times, separator)
    except ValueError as exc:
        raise RuleError(f"--add-output {text!r}: {exc}") from exc
    return output.name, output.text


def rules_from_json(data: Any, source: str) -> list[Rule]:
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise RuleError(f"{source}: expected a list of rule objects")
    known = {"match", "all", "set", "rename", "delete_keys", "add_outputs", "delete", "add"}
    rules = []
    for n, item in enumerate(data):
        where = f"{source} rule {n}"
        if not isinstance(item, dict):
            raise RuleError(f"{where}: expected an object")
        unknown = set(item) - known
        if unknown:
            raise RuleError(f"{where}: unknown field{'s' if len(unknown) > 1 else ''} {sorted(unknown)}; "
                            f"known: {sorted(known)}")
        match = item.get("match", {})
        if not isinstance(match, dict) or not all(isinstance(v, str) for v in match.values()):
            raise RuleError(f"{where}: match must be an object of key: pattern strings")
        adds = item.get("add", [])
        if isinstance(adds, dict) or (isinstance(adds, list) and adds and isinstance(adds[0], list)
                                      and len(adds[0]) == 2 and isinstance(adds[0][0], str)):
            adds = [adds]
        delete_keys = item.get("delete_keys", [])
        outputs = item.get("add_outputs", [])
        if not isinstance(delete_keys, list) or not isinstance(outputs, list):
            raise RuleError(f"{where}: delete_keys and add_outputs must be lists")
        rule = Rule(
            match=dict(match),
            all=bool(item.get("all", False)),
            set=_pairs_from_json(item.get("set", {}), f"{where} set"),
            rename=_pairs_from_json(item.get("rename", {}), f"{where} rename"),
            delete_keys=[str(k) for k in delete_keys],
            add_outputs=[str(o) for o in outputs],
            delete=bool(item.get("delete", False)),
            add=[_pairs_from_json(a, f"{where} add") for a in adds],
        )
        rule.check(where)
        rules.append(rule)
    return rules


def apply_rules(entities: Entities, rules: Sequence[Rule]) -> Report:
    """Apply the rules in order: for each, on the matched entities, rename keys,
    set keys, delete keys, add outputs, then delete the entities; then add new ones."""
    report = Report()
    separator = entities.output_separator
    for rule in rules:
        if rule.match:
            matched = entities.find(**rule.match)
        elif rule.all:
            matched = list(entities)
        else:
            matched = []
        report.matched += len(matched)
        outputs = [parse_output(o, separator) for o in rule.add_outputs]
        for entity in matched:
            for old, new in rule.rename:
                if old in entity:
                    entity.rename(old, new)
            for key, value in rule.set:
                entity.set(key, value)
            for key in rule.delete_keys:
                if key in entity:
                    entity.delete(key)
            for key, value in outputs:
                entity.add(key, value)
            report.changed += entity.changed
        if rule.delete:
            report.deleted += entities.remove_all(matched)
        for pairs in rule.add:
            entities.add(pairs)
            report.added += 1
    return report


def _edit(path: str, output: str, rules: list[Rule], from_ent: str | None, *,
          overwrite: bool) -> tuple[Report, int, int]:
    """The rules on the entity lump, then on each partition file beside the map (Titanfall's
    ``.ent`` files; an ``add`` goes to the lump only); ``--from-ent`` replaces the lump.  Every
    other lump and file is written as read."""
    with open_map(path) as bsp:
        if from_ent:
            entities = read_ent_file(from_ent, bsp.version)
        else:
            found = bsp.lump_or_none(LumpId.ENTITIES, "read the entities")
            entities = Entities(bsp_version=bsp.version) if found is None else found
        report = apply_rules(entities, rules)
        bsp.set_lump(LumpId.ENTITIES, entities)
        editing = [rule._replace(add=[]) for rule in rules]
        for partition, listed in bsp.partition_entities().items():
            more = apply_rules(listed, editing)
            for name in ("matched", "changed", "deleted"):
                setattr(report, name, getattr(report, name) + getattr(more, name))
            bsp.set_partition_entities(partition, listed)
        # A file the save writes beside OUTPUT (a .ent file) is replaced only with --overwrite.
        before, after = _common.save_map(bsp, output, overwrite=overwrite)
    return report, before, after


_ASSIGNMENTS = {"--set": "KEY=VALUE", "--rename": "OLD=NEW", "--match": "KEY=PATTERN"}


def _suggest_assignment(ap: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """``--set KEY VALUE`` (two words, a natural mistake) is a usage error that shows the one-word form."""
    for i, word in enumerate(argv[:-2]):
        form = _ASSIGNMENTS.get(word)
        key, value = argv[i + 1], argv[i + 2]
        if form is not None and "=" not in key and not value.startswith("-"):
            ap.error(f"{word} takes {form} as one word: {word} {key}={shlex.quote(value)}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = _common.parser("edit-entities", "Change, add or delete entities by simple rules, or replace them all "
                                         "from a .ent file; writes a new map.", epilog=RULES_HELP)
    ap.add_argument("map", help="the .bsp file to read")
    ap.add_argument("-o", "--output", required=True, help="where to write the edited map")
    ap.add_argument("--overwrite", action="store_true",
                    help="allow OUTPUT to exist already, or to be the input map (replaced atomically)")
    ap.add_argument("--from-ent", metavar="FILE.ent",
                    help="replace the entity lump with the text of FILE.ent (as 'entities MAP --ent' writes it); "
                         "rules, if any, are applied after")
    pick = ap.add_argument_group("which entities (all criteria must hold)")
    pick.add_argument("--match-class", metavar="C", help="classname pattern (case-insensitive, * wildcard)")
    pick.add_argument("--match-name", metavar="N", help="targetname pattern (case-insensitive, * wildcard)")
    pick.add_argument("--match", action="append", default=[], metavar="KEY=PATTERN",
                      help="any other key's value (repeatable)")
    pick.add_argument("--all", action="store_true", help="every entity (worldspawn included)")
    act = ap.add_argument_group("what to do with them (in this order)")
    act.add_argument("--rename", action="append", default=[], metavar="OLD=NEW", help="rename a key")
    act.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a key (one value)")
    act.add_argument("--delete-key", action="append", default=[], metavar="KEY", help="remove every KEY pair")
    act.add_argument("--add-output", action="append", default=[],
                     metavar="NAME=TARGET,INPUT[,PARAM[,DELAY[,TIMES]]]",
                     help="append an output, written with the map's field separator")
    act.add_argument("--delete", action="store_true", help="delete the matched entities")
    ap.add_argument("--add", action="append", default=[], metavar="K=V,K=V",
                    help="add an entity: 'classname=info_target,targetname=x,origin=0 0 0' or a JSON object")
    ap.add_argument("--rules", metavar="FILE", help="a JSON file of rules, applied first (format below)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    _common.variant_option(ap)
    arguments = list(sys.argv[1:] if argv is None else argv)
    _suggest_assignment(ap, arguments)
    args = ap.parse_args(arguments)

    try:
        match = {k: v for k, v in (split_assignment(m, "--match") for m in args.match)}
        if args.match_class is not None:
            match["classname"] = args.match_class
        if args.match_name is not None:
            match["targetname"] = args.match_name
        command_rule = Rule(
            match=match, all=args.all,
            set=[split_assignment(s, "--set") for s in args.set],
            rename=[split_assignment(r, "--rename") for r in args.rename],
            delete_keys=list(args.delete_key),
            add_outputs=list(args.add_output),
            delete=args.delete,
            add=[parse_pairs(a) for a in args.add],
        )
        command_rule.check("command line")
    except RuleError as exc:
        ap.error(str(exc))
    if not (args.rules or args.from_ent or command_rule.edits or command_rule.add):
        ap.error("nothing to do: give --set, --rename, --delete-key, --add-output, --delete, --add, --rules "
                 "or --from-ent")

    def body() -> int:
        _common.check_output(args.output, overwrite=args.overwrite, inputs=[args.map], may_replace_input=True)
        try:
            rules: list[Rule] = []
            if args.rules:
                with open(args.rules, encoding="utf-8") as handle:
                    try:
                        data = json.load(handle)
                    except json.JSONDecodeError as exc:
                        raise RuleError(f"{args.rules}: bad JSON: {exc}") from exc
                rules += rules_from_json(data, args.rules)
            if command_rule.edits or command_rule.add:
                rules.append(command_rule)
            report, before, after = _edit(args.map, args.output, rules, args.from_ent, overwrite=args.overwrite)
        except (ValueError, TypeError) as exc:
            # Bad rules or values (a value with a double quote, say), and
            # BspFormatError (a ValueError) from the map: one line, exit 1.
            return _common.error(exc)
        summary = {"output": str(args.output), **report.__dict__, "bytes_before": before, "bytes_after": after}
        if args.from_ent:
            summary["from_ent"] = args.from_ent
        if args.json:
            _common.print_json(summary)
        else:
            print(f"matched {report.matched}, changed {report.changed}, deleted {report.deleted}, "
                  f"added {report.added} entities{f' after reading {args.from_ent}' if args.from_ent else ''}; "
                  f"wrote {args.output} ({_common.sizes(before, after)})")
        return 0

    return _common.run(body, args)
