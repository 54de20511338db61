#!/usr/bin/env python3
# A stand-in Prometheus for measuring `gpudoctor fleet --prometheus` at fleet scale: answers
# fleet's query_range requests (the metric is the first gpudoctor_/DCGM_ name in the PromQL) for
# NODES x 8 H100s, labels as fleet's `max by` clauses leave them, one point per step; GPU 3 of
# node 7 is slow. Logs every query with its size to stderr. 127.0.0.1 only.
#
#   python3 bench/fleet_prometheus_standin.py 19393 12500 2> standin.log &   # 100,000 GPUs
#   /usr/bin/time -v build/gpudoctor fleet --json --prometheus http://127.0.0.1:19393 \
#       --since 1h --deadline 500 > out.json
#   tail -1 standin.log    # queries and bytes; figures in docs/fleet.md
import http.server, re, sys, urllib.parse
NODES = int(sys.argv[2])
stats = {"q": 0, "b": 0}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        u = urllib.parse.urlparse(self.path); p = urllib.parse.parse_qs(u.query)
        q = p["query"][0]; start = int(p["start"][0]); end = int(p["end"][0]); step = int(p["step"][0])
        m = re.search(r"gpudoctor_[a-z_]+|DCGM_FI_[A-Z_]+", q).group(0)
        ts = list(range(start, end + 1, step))
        parts = []
        val = {"gpudoctor_gpu_info": "1", "gpudoctor_gpu_sm_clock_hertz": "1980000000",
               "gpudoctor_gpu_utilization_ratio": "0.97", "gpudoctor_gpu_power_watts": "655.5",
               "gpudoctor_gpu_temperature_celsius": "61.5", "gpudoctor_gpu_power_limit_watts": "700",
               "gpudoctor_gpu_ecc_sbe_volatile_total": "0", "gpudoctor_gpu_ecc_dbe_volatile_total": "0",
               "gpudoctor_gpu_pcie_replays_total": "0"}.get(m)
        if val is not None:
            for n in range(NODES):
                for g in range(8):
                    lab = '"hostname":"node%d","gpu":"%d","pci_bus_id":"00000000:%02X:00.0"' % (n, g, 0x18 + g * 16)
                    if m == "gpudoctor_gpu_info":
                        lab += ',"uuid":"GPU-%d","model":"NVIDIA H100 80GB HBM3","serial":"SN%d"' % (n * 8 + g, 100000 + n * 8 + g)
                    v = val
                    if m == "gpudoctor_gpu_sm_clock_hertz" and n == 7 and g == 3: v = "1200000000"
                    parts.append('{"metric":{%s},"values":[%s]}' % (lab, ",".join('[%d,"%s"]' % (t, v) for t in ts)))
        body = ('{"status":"success","data":{"resultType":"matrix","result":[%s]}}' % ",".join(parts)).encode()
        stats["q"] += 1; stats["b"] += len(body)
        sys.stderr.write("query %d %s bytes=%d total=%d\n" % (stats["q"], m, len(body), stats["b"])); sys.stderr.flush()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
