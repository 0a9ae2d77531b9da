#!/usr/bin/env python3
"""schema_check.py: checks JSON files against a JSON Schema, with the
Python standard library only. It knows the part of JSON Schema (2020-12)
that schema/findings.schema.json uses, and refuses a schema that uses any
other keyword, so that a check cannot pass by ignoring what it does not
know: type, const, enum, required, properties, additionalProperties,
items, minimum, maximum, minLength, pattern, $ref (to #/$defs/...),
anyOf, allOf; annotations ($schema, $id, title, description) are skipped.

usage: schema_check.py SCHEMA FILE|DIR...   prints each error as FILE: PATH: what;
                    a DIR means its *.json; last line "schema: N passed, N failed"
"""
import json
import os
import re
import sys

KNOWN = {"type", "const", "enum", "required", "properties", "additionalProperties", "items",
         "minimum", "maximum", "minLength", "pattern", "$ref", "anyOf", "allOf", "$defs",
         "$schema", "$id", "title", "description"}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class Checker:
    def __init__(self, root):
        self.root = root
        self.check_schema(root, "#")

    def check_schema(self, s, where):
        if isinstance(s, bool):
            return
        if not isinstance(s, dict):
            raise SystemExit("schema %s: not an object" % where)
        for k, v in s.items():
            if k not in KNOWN:
                raise SystemExit("schema %s: keyword %r is not supported by this checker" % (where, k))
            if k in ("properties", "$defs"):
                for n, sub in v.items():
                    self.check_schema(sub, "%s/%s/%s" % (where, k, n))
            elif k in ("items", "additionalProperties") and not isinstance(v, bool):
                self.check_schema(v, "%s/%s" % (where, k))
            elif k in ("anyOf", "allOf"):
                for i, sub in enumerate(v):
                    self.check_schema(sub, "%s/%s/%d" % (where, k, i))
            elif k == "type":
                for t in v if isinstance(v, list) else [v]:
                    if t not in TYPES:
                        raise SystemExit("schema %s: unknown type %r" % (where, t))

    def ref(self, r):
        if not r.startswith("#/"):
            raise SystemExit("schema: only local $ref is supported: %r" % r)
        s = self.root
        for part in r[2:].split("/"):
            s = s[part]
        return s

    def errors(self, v, s, path="$"):
        """The errors of value v against schema s, as (path, message)."""
        if s is True or s == {}:
            return []
        if s is False:
            return [(path, "no value is allowed here")]
        out = []
        if "$ref" in s:
            out += self.errors(v, self.ref(s["$ref"]), path)
        if "type" in s:
            ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(TYPES[t](v) for t in ts):
                return out + [(path, "is %s, not %s" % (type(v).__name__, "/".join(ts)))]
        if "const" in s and v != s["const"]:
            out.append((path, "is %r, not %r" % (v, s["const"])))
        if "enum" in s and v not in s["enum"]:
            out.append((path, "%r is not one of %s" % (v, s["enum"])))
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in s and v < s["minimum"]:
                out.append((path, "%r is below %r" % (v, s["minimum"])))
            if "maximum" in s and v > s["maximum"]:
                out.append((path, "%r is above %r" % (v, s["maximum"])))
        if isinstance(v, str):
            if "minLength" in s and len(v) < s["minLength"]:
                out.append((path, "shorter than %d" % s["minLength"]))
            if "pattern" in s and not re.search(s["pattern"], v):
                out.append((path, "%r does not match %s" % (v[:80], s["pattern"])))
        if isinstance(v, dict):
            for k in s.get("required", []):
                if k not in v:
                    out.append((path, "lacks %r" % k))
            props = s.get("properties", {})
            for k, sub in v.items():
                if k in props:
                    out += self.errors(sub, props[k], "%s.%s" % (path, k))
                elif "additionalProperties" in s:
                    out += self.errors(sub, s["additionalProperties"], "%s.%s" % (path, k))
        if isinstance(v, list) and "items" in s:
            for i, x in enumerate(v):
                out += self.errors(x, s["items"], "%s[%d]" % (path, i))
        if "allOf" in s:
            for sub in s["allOf"]:
                out += self.errors(v, sub, path)
        if "anyOf" in s:
            alts = [self.errors(v, sub, path) for sub in s["anyOf"]]
            if all(alts):
                # the alternative of the value's own type says the most
                best = min(alts, key=lambda e: (any(p == path and m.startswith("is ") for p, m in e), len(e)))
                out += best if len(best) == 1 else [(path, "matches none of anyOf")] + best[:3]
        return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    c = Checker(json.load(open(sys.argv[1], encoding="utf-8")))
    good = bad = 0
    files = []
    for a in sys.argv[2:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".json"))
        else:
            files.append(a)
    shown = 0
    for f in files:
        try:
            errs = c.errors(json.load(open(f, encoding="utf-8")), c.root)
        except (OSError, ValueError) as e:
            errs = [("$", "not JSON: %s" % e)]
        for p, m in errs[:10]:
            if shown < 40:
                print("FAIL: %s: %s: %s" % (f, p, m))
                shown += 1
        if errs:
            bad += 1
        else:
            good += 1
    print("schema: %d passed, %d failed" % (good, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
