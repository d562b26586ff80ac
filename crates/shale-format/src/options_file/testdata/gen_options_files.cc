// Writes the OPTIONS files behind ../rocksdb_defaults.ini (OPTIONS-000007) and OPTIONS-two-cfs
// (OPTIONS-000009) with RocksDB 7.8.3: g++ -std=c++17 defopts.cc -o defopts -lrocksdb && ./defopts DIR
#include "rocksdb/db.h"
#include <cstdio>
int main(int argc, char** argv) {
  rocksdb::Options o; o.create_if_missing = true;
  rocksdb::DB* db; auto s = rocksdb::DB::Open(o, argv[1], &db);
  if (!s.ok()) { fprintf(stderr, "%s\n", s.ToString().c_str()); return 1; }
  rocksdb::ColumnFamilyHandle* h; s = db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "my cf#1:x", &h);
  if (!s.ok()) { fprintf(stderr, "%s\n", s.ToString().c_str()); return 1; }
  db->DestroyColumnFamilyHandle(h);
  delete db; return 0;
}
