# Pulls the full filter block out of a RocksDB SST (footer -> metaindex -> "fullfilter.*")
# and writes it as hex: python3 extract_sst_filter.py 000009.sst out.hex
import sys, struct
data = open(sys.argv[1],'rb').read()
foot = data[-53:]
assert struct.unpack('<Q', foot[-8:])[0] == 0x88e241b785f4cff7
ver = struct.unpack('<I', foot[-12:-8])[0]
def varint(b, p):
    r=0; s=0
    while True:
        c=b[p]; p+=1; r |= (c&0x7f)<<s; s+=7
        if c<0x80: return r,p
p=1
mo,p=varint(foot,p); ms,p=varint(foot,p)
meta = data[mo:mo+ms]
nrest = struct.unpack('<I', meta[-4:])[0]
end = len(meta)-4-4*nrest
p=0; lastkey=b''; found=None
while p<end:
    sh,p=varint(meta,p); un,p=varint(meta,p); vl,p=varint(meta,p)
    k=lastkey[:sh]+meta[p:p+un]; p+=un; v=meta[p:p+vl]; p+=vl; lastkey=k
    print(k, file=sys.stderr)
    if k.startswith(b'fullfilter.'):
        fo,q=varint(v,0); fs,q=varint(v,q); found=(fo,fs)
fo,fs=found
print("version", ver, "filter", fo, fs, file=sys.stderr)
open(sys.argv[2],'w').write(data[fo:fo+fs].hex())
