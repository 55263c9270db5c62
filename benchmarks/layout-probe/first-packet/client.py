# N sequential TCP connects to 172.16.0.1:80 (DNATed by the table under test); prints the p50 and p90 connect time.
import socket, time, sys, statistics
n = int(sys.argv[1]); ts = []
for _ in range(n):
    t = time.perf_counter(); c = socket.create_connection(("172.16.0.1", 80)); ts.append(time.perf_counter() - t); c.close()
ts.sort(); print("p50 %.1f us  p90 %.1f us" % (ts[len(ts)//2] * 1e6, ts[int(len(ts)*0.9)] * 1e6))
