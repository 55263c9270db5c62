# Sourced by the benchmark scripts (run from the checkout's top): the synthetic Services they write as manifests.
# Service i: ClusterIP 10.96.x.y, port 80 -> 8080, and one EndpointSlice with two ready endpoints, 10.FIRST.x.y and
# 10.202.x.y (private ranges), where x.y is i + 1.

bench_write_service() { # $1: directory, $2: index, $3: second octet of the first endpoint
    local a=$(( $2 + 1 ))
    local ip="$(( a >> 8 & 255 )).$(( a & 255 ))"
    cat > "$1/svc-$2.yaml" <<YAML
apiVersion: v1
kind: Service
metadata: {name: svc-$2, namespace: bench}
spec:
  clusterIP: 10.96.$ip
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc-$2-1, namespace: bench, labels: {kubernetes.io/service-name: svc-$2}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: 8080}]
endpoints:
  - {addresses: [10.$3.$ip], conditions: {ready: true}}
  - {addresses: [10.202.$ip], conditions: {ready: true}}
YAML
}
