"""One side of the interop test: `python interop_helper.py write|read SCENARIO PATH`.

Run by the interpreter of either implementation of the `rocksdict` module (Shale's wheel or
PyPI's rocksdict 0.3.29). `write` builds the scenario's database at PATH; `read` opens it,
checks every key, value, column family and entity against the scenario's data, and prints
the contents in iteration order (one JSON document), so the caller can also compare the
order two implementations see.
"""

import json
import os
import sys

# Set by the caller when rocksdict 0.3.29 reads a database Shale wrote: its RocksDB 9.8.4
# refuses the OPTIONS file of RocksDB 11.8.1 that Shale writes (options 9.8.4 does not know,
# such as async_wal_precreate, and rocksdict loads with ignore_unknown_options=False), as it
# refuses one RocksDB 11.8.1 itself wrote; rocksdict then falls back to default options. So
# the reader passes the options the writer used, as a user of such a database does.
EXPLICIT = os.environ.get("INTEROP_EXPLICIT") == "1"

from rocksdict import AccessType, Checkpoint, Options, Rdict, SliceTransform, WriteBatch


class Point:
    """A pickled value (module-level, so both sides unpickle it by name)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


def typed_data():
    data = {}
    # Ints: small, negative, at byte boundaries, and far beyond 64 bits.
    for i in [0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, -65536, 2**63 - 1, -(2**63), 2**64, -(2**64), 10**40, -(10**40)]:
        data[i] = i * 3 - 7
    for i in range(-300, 300, 7):
        data[i] = str(i)
    data["alpha"] = "beta"
    data["unicode é 漢字"] = "värde"
    data[""] = ""
    data[b"raw-bytes\x00\xff"] = b"\x00\x01\x02"
    data[b""] = b""
    data[1.5] = 2.25
    data[-0.125] = float("inf")
    data[True] = False
    data[False] = True
    data["pickled-dict"] = {"a": [1, 2, 3], "b": (4, 5)}
    data["pickled-list"] = [None, 1.0, "x", b"y"]
    data["pickled-obj"] = Point(3, 4)
    data["none"] = None
    return data


def show(v):
    return repr(v)


def dump(pairs):
    print(json.dumps([[show(k), show(v)] for k, v in pairs]))


def check_equal(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def write_typed(path):
    db = Rdict(path, Options())
    for k, v in typed_data().items():
        db[k] = v
    db.flush()
    # Some entries only in the WAL of the last memtable (flushed again by close, as rocksdict).
    db["after-flush"] = 42
    del db["alpha"]
    db.close()


def read_typed(path):
    db = Rdict(path)
    want = typed_data()
    want["after-flush"] = 42
    del want["alpha"]
    items = list(db.items())
    check_equal(dict(items), want, "items")
    for k, v in want.items():
        check_equal(db.get(k, "absent"), v, f"db.get({k!r})")
    check_equal("alpha" in db, False, "deleted key")
    # Int keys in value order (rocksdict's comparator), also from a key and backwards.
    ints = [k for k in db.keys() if type(k) is int]
    check_equal(ints, sorted(ints), "int order")
    all_ints = sorted(k for k in want if type(k) is int)
    check_equal(list(db.keys(from_key=-129))[:3], [k for k in all_ints if k >= -129][:3], "seek int")
    check_equal(
        list(db.keys(from_key=128, backwards=True))[:3],
        [k for k in reversed(all_ints) if k <= 128][:3],
        "seek_for_prev int",
    )
    db.close()
    dump(items)


CF_OPTS = {"ints": SliceTransform.create_max_len_prefix(8), "strs": None}


def write_cf(path):
    opt = Options()
    opt.create_missing_column_families(True)
    cfs = {}
    for name, prefix in CF_OPTS.items():
        o = Options()
        if prefix is not None:
            o.set_prefix_extractor(prefix)
        cfs[name] = o
    db = Rdict(path, options=opt, column_families=cfs)
    ints = db.get_column_family("ints")
    strs = db.get_column_family("strs")
    for i in range(500):
        ints[i] = i * i
        strs[str(i)] = str(i * i)
    db["in-default"] = True
    later = db.create_column_family("later")
    later[b"k"] = b"v"
    # A batch across families.
    wb = WriteBatch()
    wb.put("batched", 1, db.get_column_family_handle("strs"))
    wb.put("batched", 2)
    db.write(wb)
    for h in (ints, strs, later):
        h.close()
    db.close()


def read_cf(path):
    check_equal(sorted(Rdict.list_cf(path)), ["default", "ints", "later", "strs"], "list_cf")
    if EXPLICIT:
        cfs = {"strs": Options(), "later": Options()}
        cfs["ints"] = Options()
        cfs["ints"].set_prefix_extractor(CF_OPTS["ints"])
        db = Rdict(path, options=Options(), column_families=cfs)
    else:
        db = Rdict(path)
    out = []
    ints = db.get_column_family("ints")
    check_equal(dict(ints.items()), {i: i * i for i in range(500)}, "ints family")
    check_equal(list(ints.keys())[:5], [0, 1, 2, 3, 4], "ints order")
    strs = db.get_column_family("strs")
    want = {str(i): str(i * i) for i in range(500)}
    want["batched"] = 1
    check_equal(dict(strs.items()), want, "strs family")
    check_equal(db["in-default"], True, "default family")
    check_equal(db["batched"], 2, "batch in default")
    later = db.get_column_family("later")
    check_equal(later[b"k"], b"v", "family made after open")
    for name, h in (("ints", ints), ("strs", strs), ("later", later)):
        out.append((name, list(h.items())))
        h.close()
    db.close()
    dump(out)


ENTITIES = [
    ("Guangdong", ["language", "city", "population"], ["Cantonese", "Shenzhen", 1.27]),
    ("Sichuan", ["language", "city"], ["Sichuanhua", "Chengdu"]),
    (7, ["n", 3], [[1, 2], b"bytes"]),
]


def write_entities(path):
    db = Rdict(path, Options())
    for key, names, values in ENTITIES:
        db.put_entity(key, names, values)
    db["plain"] = "value"
    db.close()


def read_entities(path):
    db = Rdict(path)
    got = {}
    for key, names, values in ENTITIES:
        want = sorted(zip(names, values), key=lambda c: encoded_name(c[0]))
        check_equal(db.get_entity(key), want, f"entity {key!r}")
        check_equal(db[key], "", f"default column of {key!r}")
        got[repr(key)] = want
    check_equal(db.get_entity("plain"), [("", "value")], "plain value as entity")
    ents = list(db.entities())
    check_equal(len(ents), 4, "entities")
    db.close()
    dump(ents)


def encoded_name(name):
    # Column names sort by their encoded bytes (type byte first).
    if isinstance(name, str):
        return b"\x02" + name.encode()
    if isinstance(name, int):
        return b"\x03" + name.to_bytes(1, "big", signed=True)
    raise TypeError(name)


def raw_data():
    return {bytes([i % 256]) * (i % 7 + 1) + i.to_bytes(2, "big"): bytes(range(i % 256)) for i in range(1000)}


def write_raw(path):
    db = Rdict(path, Options(raw_mode=True))
    for k, v in raw_data().items():
        db[k] = v
    db.put_entity(b"entity", [b"b", b"a"], [b"2", b"1"])
    db.close()


def read_raw(path):
    # Raw mode comes from rocksdict-config.json (with the OPTIONS file).
    db = Rdict(path, Options(raw_mode=True)) if EXPLICIT else Rdict(path)
    want = raw_data()
    want[b"entity"] = b""
    items = list(db.items())
    check_equal(dict(items), want, "raw items")
    check_equal([k for k, _ in items], sorted(want), "raw order (bytewise)")
    check_equal(db.get_entity(b"entity"), [(b"a", b"1"), (b"b", b"2")], "raw entity")
    db.close()
    dump(items)


def write_checkpoint(path):
    src = path + ".src"
    db = Rdict(src, Options())
    for i in range(2000):
        db[i] = {"square": i * i}
    db.flush()
    for i in range(2000, 2100):
        db[i] = {"square": i * i}
    Checkpoint(db).create_checkpoint(path)
    db.close()
    Rdict.destroy(src)


def read_checkpoint(path):
    db = Rdict(path)
    items = list(db.items())
    check_equal(dict(items), {i: {"square": i * i} for i in range(2100)}, "checkpoint items")
    check_equal([k for k, _ in items], list(range(2100)), "checkpoint order")
    db.close()
    # Read-only access to the same files.
    ro = Rdict(path, access_type=AccessType.read_only())
    check_equal(ro[2099], {"square": 2099 * 2099}, "read-only open")
    ro.close()
    dump(items[:10])


SCENARIOS = {
    "typed": (write_typed, read_typed),
    "cf": (write_cf, read_cf),
    "entities": (write_entities, read_entities),
    "raw": (write_raw, read_raw),
    "checkpoint": (write_checkpoint, read_checkpoint),
}


if __name__ == "__main__":
    action, scenario, path = sys.argv[1:4]
    sys.modules["interop_helper"] = sys.modules["__main__"]
    write, read = SCENARIOS[scenario]
    if action == "write":
        write(path)
    else:
        read(path)
    sys.stdout.flush()
    os._exit(0)
