"""Batch gets (`Rdict.get(list)`) larger than one engine run of Shale's binding (4096 keys):
the answers come back in the caller's order, absent keys as the default, in default mode
(typed keys, int keys in the `rocksdict` comparator's order), in raw mode and in a column
family, and every answer equals the point get of the same key. A batch read while another
thread overwrites the keys is one view of the database: every value of the batch comes from
the same round of writes.

Run with the installed `rocksdict` (Shale's wheel): `python tests/test_batch_get.py -v`.
"""

import random
import shutil
import tempfile
import threading
import unittest

from rocksdict import Options, Rdict, WriteBatch

MISSING = object()


class BatchGet(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="shale-batch-get-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def check(self, db, keys):
        got = db.get(keys, MISSING)
        self.assertEqual(len(got), len(keys))
        for k, v in zip(keys, got):
            want = db.get(k, MISSING)
            if want is MISSING:
                self.assertIs(v, MISSING, k)
            else:
                self.assertEqual(v, want, k)
        return got

    def test_typed_keys(self):
        rng = random.Random(1)
        db = Rdict(f"{self.dir}/typed")
        stored = []
        for i in range(6000):
            stored += [i - 3000, f"s{i}", f"b{i}".encode(), i + 0.5, (1 << 70) + i]
        absent = [-(10**6), "absent", b"absent", 0.25, (1 << 80)]
        for i, k in enumerate(stored):
            db[k] = [i] if i % 3 == 0 else i
        db.flush()
        for k in stored[::7]:
            db[k] = "newer"
        keys = stored + absent * 3
        rng.shuffle(keys)
        got = self.check(db, keys)
        self.assertEqual(sum(v is MISSING for v in got), 15)
        self.assertEqual(got[keys.index(stored[7])], "newer")
        db.close()

    def test_raw_mode_and_column_family(self):
        rng = random.Random(2)
        db = Rdict(f"{self.dir}/raw", Options(raw_mode=True))
        cf = db.create_column_family("cf", Options(raw_mode=True))
        keys = [rng.randbytes(rng.randint(1, 40)) for _ in range(20000)]
        for i, k in enumerate(keys):
            if i % 4:
                db[k] = k * 2
            if i % 5:
                cf[k] = k[::-1]
        db.flush()
        self.check(db, keys)
        self.check(cf, keys)
        self.assertEqual(db.get([]), [])
        db.close()

    def test_one_view_while_writing(self):
        db = Rdict(f"{self.dir}/view", Options(raw_mode=True))
        keys = [b"%08d" % i for i in range(30000)]
        for k in keys:
            db[k] = b"0"
        stop = threading.Event()

        def writer():
            n = 0
            while not stop.is_set():
                n += 1
                # One write batch per round: a batch get sees a round whole or not at all.
                wb = WriteBatch(raw_mode=True)
                for k in keys:
                    wb.put(k, b"%d" % n)
                db.write(wb)

        t = threading.Thread(target=writer)
        t.start()
        try:
            for _ in range(10):
                got = db.get(keys)
                self.assertEqual(len(set(got)), 1, "a batch get mixed two rounds of writes")
        finally:
            stop.set()
            t.join()
        db.close()


if __name__ == "__main__":
    unittest.main()
