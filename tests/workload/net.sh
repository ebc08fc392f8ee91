# Local servers on the sandbox's own loopback: TCP (IPv4 and IPv6) and HTTP.
python3 - <<'PY' && echo "OK loopback-tcp"
import socket, threading
for fam, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    srv = socket.socket(fam); srv.bind((host, 0)); srv.listen(1)
    port = srv.getsockname()[1]
    def serve():
        c, _ = srv.accept(); c.sendall(c.recv(100).upper()); c.close()
    t = threading.Thread(target=serve); t.start()
    cl = socket.create_connection((host, port)); cl.sendall(b"ping"); assert cl.recv(100) == b"PING"
    t.join(); cl.close(); srv.close()
PY
node - <<'JS' && echo "OK loopback-http"
const http = require("http");
const srv = http.createServer((req, res) => res.end("served " + req.url));
srv.listen(0, "localhost", () => {
  http.get({ host: "localhost", port: srv.address().port, path: "/x" }, (res) => {
    let b = ""; res.on("data", (d) => (b += d));
    res.on("end", () => { srv.close(); process.exit(b === "served /x" ? 0 : 1); });
  }).on("error", (e) => { console.error(e); process.exit(1); });
});
JS
