# Listeners on the two endpoint addresses answer "ENDPOINT PEER"; 200 connects per service address, counted.
import socket, sys, collections, threading
def serve(addr):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((addr, 8080)); s.listen(64)
    while True:
        c, peer = s.accept(); c.sendall((addr + " " + peer[0]).encode()); c.close()
for a in ("10.0.0.1", "10.0.0.2"):
    threading.Thread(target=serve, args=(a,), daemon=True).start()
import time; time.sleep(0.3)
for dst, port in (("172.16.0.1", 80), ("192.0.2.7", 80), ("192.168.10.20", 30080)):
    seen = collections.Counter()
    for _ in range(200):
        c = socket.create_connection((dst, port), timeout=2); seen[c.recv(100).decode()] += 1; c.close()
    print(dst, port, dict(seen))
