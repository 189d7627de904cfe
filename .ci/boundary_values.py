#!/usr/bin/env python3
"""Boundary values for every query parameter of every documented GET.

    boundary_values.py BASE_URL API_KEY

Reads the service's OpenAPI document and, one parameter at a time, sends
values at and past the edges of what the parameter accepts: dates far
outside the calendar and around its supported range, `from` after `to`,
numbers below the minimum, past 64 bits, fractional and non-numeric. Any
5xx fails, and a value the parameter does not accept must be 400
`validation_failed` with a detail naming it (query parameters are checked
before a path's id is looked up, so a made-up id does not get in the way).
"""

import json
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

I64_MAX = 2**63 - 1

# Values no date parameter accepts.
BAD_DATES = [
    "-262143-01-01",
    "+262142-12-31",
    "-262144-01-01",
    "+262143-01-01",
    "0000-01-01",
    "0001-01-01",
    "1969-12-31",
    "1969-12-31T23:59:59Z",
    "10000-01-01",
    "9999-12-32",
    "2026-02-30",
    "yesterday",
    "2026-03-01T25:00:00Z",
]
# Values every date parameter accepts (no 5xx; anything else is allowed).
EDGE_DATES = ["1970-01-01", "9999-12-31", "9999-12-31T23:59:59.999Z"]


def request(base, key, path, query):
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    req = urllib.request.Request(url, headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def is_date(param):
    schema = param.get("schema", {})
    text = (param.get("description") or "").lower()
    return schema.get("format") in ("date", "date-time") or (
        schema.get("type") == "string" and ("date" in text or "rfc 3339" in text)
    )


def is_number(param):
    schema = param.get("schema", {})
    return schema.get("type") in ("integer", "number") or param["name"] in ("limit", "offset")


def number_cases(param):
    """(value, must be refused) pairs for an integer parameter."""
    schema = param.get("schema", {})
    minimum = schema.get("minimum")
    maximum = schema.get("maximum")
    cases = [
        ("-1", minimum is not None and minimum > -1),
        (str(I64_MAX), maximum is not None and maximum < I64_MAX),
        (str(I64_MAX + 1), True),
        ("-" + str(I64_MAX + 2), True),
        ("1" + "0" * 40, True),
        ("1.5", schema.get("type") == "integer" or param["name"] in ("limit", "offset")),
        ("1e3", schema.get("type") == "integer" or param["name"] in ("limit", "offset")),
        ("abc", True),
    ]
    if minimum is not None:
        cases.append((str(int(minimum) - 1), True))
        cases.append((str(int(minimum)), False))
    if maximum is not None:
        cases.append((str(int(maximum) + 1), True))
    return cases


def filler(param):
    """A plausible value for a required parameter that is not under test."""
    schema = param.get("schema", {})
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("type") in ("integer", "number"):
        return "1"
    return "a"


def names_field(body, field):
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    if parsed.get("code") != "validation_failed":
        return False
    return any(d.get("field") == field for d in parsed.get("details", []))


def main():
    base, key = sys.argv[1].rstrip("/"), sys.argv[2]
    status, body = request(base, key, "/api/v1/openapi.json", None)
    if status != 200:
        sys.exit(f"openapi.json: {status}")
    document = json.loads(body)
    # Paths are full (`/api/v1/…`, `/widget/v1/…`) unless the document
    # names a server URL they are listed under.
    servers = document.get("servers") or [{"url": ""}]
    server = urllib.parse.urlparse(servers[0]["url"]).path.rstrip("/")
    failures, sent = [], 0
    for path, item in sorted(document["paths"].items()):
        operation = item.get("get")
        if operation is None:
            continue
        params = item.get("parameters", []) + operation.get("parameters", [])
        path_params = [p for p in params if p["in"] == "path"]
        prefix = server if server and not path.startswith(server + "/") else ""
        concrete = path
        for p in path_params:
            concrete = concrete.replace("{" + p["name"] + "}", filler(p))
        query = [p for p in params if p["in"] == "query"]
        required = {p["name"]: filler(p) for p in query if p.get("required")}
        cases = []
        for p in query:
            if is_date(p):
                cases += [({p["name"]: v}, p["name"], True) for v in BAD_DATES]
                cases += [({p["name"]: v}, p["name"], False) for v in EDGE_DATES]
            elif is_number(p):
                cases += [({p["name"]: v}, p["name"], bad) for v, bad in number_cases(p)]
        names = {p["name"] for p in query}
        if {"from", "to"} <= names:
            cases.append(({"from": "2026-03-02", "to": "2026-03-01"}, "from", True))
            cases.append(({"from": "+262142-12-31", "to": "-262143-01-01"}, "from", True))
        for values, field, bad in cases:
            sent += 1
            status, body = request(base, key, prefix + concrete, {**required, **values})
            shown = f"GET {path} {urllib.parse.urlencode(values)}: {status} {body[:200]!r}"
            if status >= 500:
                failures.append(shown)
            elif bad and not (status == 400 and names_field(body, field)):
                failures.append(shown + f" (expected 400 validation_failed naming {field})")
    print(f"boundary values: {sent} requests, {len(failures)} failures")
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
