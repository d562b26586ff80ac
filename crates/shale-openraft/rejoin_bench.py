# Rejoin figure of docs/benchmarks.md (openraft section): 3 nodes, fill, kill a follower, restart it cold, time to catch up.
# Usage: B=path/to/shale-kv-cluster python3 rejoin_bench.py [writes] [value bytes]; REUSE=1 skips init and fill.
import subprocess, time, json, os, sys, signal
B=os.environ.get('B','/work/target-raft/ci/shale-kv-cluster')
D=os.environ.get('DIR','/tmp/shale-rejoin-data'); P=23101
N=int(sys.argv[1]) if len(sys.argv)>1 else 4900; VS=int(sys.argv[2]) if len(sys.argv)>2 else 210000
addrs=[f'127.0.0.1:{P+i}' for i in range(3)]
procs={}
def start(i):
    procs[i]=subprocess.Popen([B,'node','--id',str(i),'--http',addrs[i-1],'--dir',f'{D}/{i}'],stderr=subprocess.DEVNULL)
def metrics(i):
    r=subprocess.run([B,'metrics','--addr',addrs[i-1]],capture_output=True,text=True)
    return json.loads(r.stdout) if r.returncode==0 else None
def idx(x):
    return None if x is None else x['index']
for i in (1,2,3): start(i)
time.sleep(1.5)
if not os.environ.get('REUSE'):
    print(subprocess.run([B,'init','--members',','.join(f'{i}={addrs[i-1]}' for i in (1,2,3))],capture_output=True,text=True))
    time.sleep(2)
    t=time.time()
    r=subprocess.run([B,'bench','--addr',','.join(addrs),'--clients','8','--requests',str(N),'--value-size',str(VS),'--random-values'],capture_output=True,text=True)
    print(r.stdout, r.stderr[-500:], 'fill took %.1fs'%(time.time()-t), flush=True)
# Every follower caught up before the restart.
t=time.time()
while True:
    m=metrics(1) or metrics(2) or metrics(3)
    leader=m and m.get('current_leader')
    if leader:
        ml=metrics(leader); last=ml['last_log_index']; rep=ml.get('replication') or {}
        if all(idx(rep.get(str(i))) == last for i in (1,2,3) if i!=leader): break
    time.sleep(0.5)
print('all caught up (index %s) after %.1fs'%(last,time.time()-t), flush=True)
f=[i for i in (1,2,3) if i!=leader][0]
print('leader',leader,'restarting follower',f, flush=True)
os.kill(procs[f].pid, signal.SIGKILL); procs[f].wait()
print(subprocess.run(['du','-sh',*[f'{D}/{f}/'+x for x in os.listdir(f'{D}/{f}')],f'{D}/{f}/sm',f'{D}/{f}'],capture_output=True,text=True).stdout)
r=subprocess.run([B,'bench','--addr',','.join(addrs),'--clients','4','--requests','200','--value-size','100'],capture_output=True,text=True)
print('while down:',r.stdout.strip(), flush=True)
for root,_,files in os.walk(f'{D}/{f}'):
    for fn in files:
        fd=os.open(os.path.join(root,fn),os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)
target=idx(metrics(leader)['last_log_index']) if isinstance(metrics(leader)['last_log_index'],dict) else metrics(leader)['last_log_index']
print('leader last log index',target,'load',open('/proc/loadavg').read().strip(), flush=True)
t0=time.time(); start(f); up=None
while True:
    mf=metrics(f)
    if mf is not None and up is None: up=time.time()-t0
    if mf is not None and mf.get('current_leader')==leader and (idx(mf['last_applied']) or 0)>=target:
        ml=metrics(leader); rep=ml.get('replication') or {}
        mt=idx(rep.get(str(f)))
        if mt is not None and mt>=target: break
    if time.time()-t0>600: print('timeout'); break
    time.sleep(0.02)
print('restarted node %d: serving after %.2fs, caught up (applied and matched index %d) after %.2fs; load %s'%(f,up or -1,target,time.time()-t0,open('/proc/loadavg').read().strip()))
for p in procs.values(): p.send_signal(signal.SIGTERM)
for p in procs.values(): p.wait()
