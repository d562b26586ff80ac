// Prints hash64 values and built-in filter bytes computed by RocksDB 7.8.3 itself, for
// ../tests.rs (rocksdb_filters.txt = the "filter" lines). Build against the installed library:
//   g++ -std=c++17 -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -I$ROCKSDB_SRC -I$ROCKSDB_SRC/include \
//       gen_rocksdb_filters.cc -o gen -lrocksdb && ./gen
#include <cstdio>
#include <string>
#include <memory>
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"
namespace rocksdb { uint64_t Hash64(const char* data, size_t n); uint32_t Hash(const char*, size_t, uint32_t); }
using namespace rocksdb;
static std::string hex(const char* d, size_t n){ std::string s; char b[3]; for(size_t i=0;i<n;i++){snprintf(b,3,"%02x",(unsigned char)d[i]); s+=b;} return s; }
static std::string key_for(int i) {
  // varied lengths 0..40
  std::string k;
  int len = (i * 7) % 41;
  for (int j = 0; j < len; j++) k.push_back(char((i * 31 + j * 17) & 0xff));
  k += std::to_string(i);
  return k;
}
int main() {
  // Hash64 on long inputs (pattern bytes)
  for (size_t n : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 2047, 5000}) {
    std::string s; for (size_t i = 0; i < n; i++) s.push_back(char((i * 131 + 7) & 0xff));
    printf("hash64 %zu %llu\n", n, (unsigned long long)Hash64(s.data(), s.size()));
  }
  for (int fv : {4, 5}) {
    for (double bpk : {1.0, 4.4, 7.5, 10.0, 16.0, 23.4, 60.0}) {
      for (int nkeys : {0, 1, 37, 500}) {
        BlockBasedTableOptions topts; topts.format_version = fv;
        std::unique_ptr<const FilterPolicy> pol(NewBloomFilterPolicy(bpk, false));
        FilterBuildingContext ctx(topts);
        std::unique_ptr<FilterBitsBuilder> b(pol->GetBuilderWithContext(ctx));
        for (int i = 0; i < nkeys; i++) { std::string k = key_for(i); b->AddKey(k); if (i % 5 == 0) b->AddKey(k); }
        std::unique_ptr<const char[]> buf;
        Slice s = b->Finish(&buf);
        printf("filter %d %.1f %d %s\n", fv, bpk, nkeys, hex(s.data(), s.size()).c_str());
      }
    }
  }
}
