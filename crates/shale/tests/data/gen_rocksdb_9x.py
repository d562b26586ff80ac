#!/usr/bin/env python3
"""Makes the RocksDB 9.8.4 databases under tests/data/rocksdb-9.8.4/ that
tests/interop_rocksdb_9x.rs opens.

RocksDB 9.8.4 comes from the `rocksdict` wheel (0.3.29) on PyPI, which bundles it:
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install rocksdict==0.3.29
    /tmp/venv/bin/python tests/data/gen_rocksdb_9x.py tests/data/rocksdb-9.8.4

The contents follow a rule that the Rust test repeats (see `model` there), and this
script checks RocksDB's own reading against that rule before it finishes.
"""
import os
import shutil
import sys

from rocksdict import (BlockBasedOptions, ChecksumType, DBCompressionType, Options, Rdict,
                       ReadOptions, WriteBatch, WriteOptions)


def key(i):
    return b"key%06d" % i


def value(round_, i, cf):
    return (b"%s-r%d-%d;" % (cf.encode(), round_, i)) * (1 + i % 5)


def model(n, cf):
    """What the database must hold: the same rule as `model` in interop_rocksdb_9x.rs."""
    m = {}
    for i in range(n):
        m[key(i)] = value(1, i, cf)
    for i in range(0, n, 3):
        m[key(i)] = value(2, i, cf)
    for i in range(0, n, 7):
        m.pop(key(i), None)
    for i in range(n // 10, n // 5):
        m.pop(key(i), None)
    for i in range(0, n, 5):
        m[key(i)] = value(3, i, cf)
    return m


def fill(db, handle, n, cf, flush_between):
    for i in range(n):
        handle[key(i)] = value(1, i, cf)
    if flush_between:
        db.flush()
    wb = WriteBatch(raw_mode=True)
    if cf != "default":
        wb.set_default_column_family(db.get_column_family_handle(cf))
    for i in range(0, n, 3):
        wb.put(key(i), value(2, i, cf))
    for i in range(0, n, 7):
        wb.delete(key(i))
    db.write(wb)
    handle.delete_range(key(n // 10), key(n // 5))
    if flush_between:
        db.flush()


def make(path, n, fv, checksum, compression, dynamic, cfs, recycle):
    shutil.rmtree(path, ignore_errors=True)
    o = Options(raw_mode=True)
    o.create_if_missing(True)
    o.create_missing_column_families(True)
    o.set_write_buffer_size(64 << 10)
    o.set_target_file_size_base(64 << 10)
    o.set_max_bytes_for_level_base(256 << 10)
    o.set_level_compaction_dynamic_level_bytes(dynamic)
    o.set_compression_type(compression)
    if recycle:
        o.set_recycle_log_file_num(2)
    t = BlockBasedOptions()
    t.set_format_version(fv)
    t.set_checksum_type(checksum)
    t.set_bloom_filter(10, False)
    o.set_block_based_table_factory(t)
    db = Rdict(path, o)
    handles = {"default": db}
    for cf in cfs:
        handles[cf] = db.create_column_family(cf, o)
    for cf, h in handles.items():
        fill(db, h, n, cf, True)
    db.compact_range(None, None)
    # Round 3 stays in the WAL (RocksDB does not flush on close).
    for cf, h in handles.items():
        for i in range(0, n, 5):
            h[key(i)] = value(3, i, cf)
    for cf, h in handles.items():
        want = model(n, cf)
        got = dict(h.items())
        assert got == want, (path, cf, len(got), len(want))
    db.close()
    for f in os.listdir(path):
        if f.startswith("LOG") or f == "rocksdict-config.json":
            os.remove(os.path.join(path, f))


def main(out):
    os.makedirs(out, exist_ok=True)
    # RocksDB 9.8.4's defaults: format_version 6, XXH3 checksums, dynamic level bytes.
    make(os.path.join(out, "defaults"), 2000, 6, ChecksumType.xxh3(), DBCompressionType.snappy(),
         True, ["cf1", "cf2"], False)
    for fv in (2, 3, 4, 5):
        make(os.path.join(out, "fv%d" % fv), 300, fv, ChecksumType.xxh3(), DBCompressionType.lz4(),
             False, [], False)
    for name, ck in (("crc32c", ChecksumType.crc32c()), ("xxhash", ChecksumType.xxhash()),
                     ("xxhash64", ChecksumType.xxhash64())):
        make(os.path.join(out, "fv6-" + name), 300, 6, ck, DBCompressionType.zstd(), True, [], False)
    make(os.path.join(out, "fv6-recycled-wal"), 300, 6, ChecksumType.crc32c(),
         DBCompressionType.none(), True, [], True)


if __name__ == "__main__":
    main(sys.argv[1])
