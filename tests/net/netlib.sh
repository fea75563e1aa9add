# Test hosts for tests/net/check_network.sh: network namespaces joined by veth links, each
# with its own address, and the faults a real network has. Needs root (ip netns, iptables).
#
# The coordinator's host is the namespace "${net}c"; worker host k is "${net}wk", joined to it
# by its own link (10.77.k.1 on the coordinator's side, 10.77.k.2 on the worker's), so that one
# worker's link can fail while the others' keep working.
net="drift$$"

# net_hosts N: the coordinator's host and N worker hosts, each link up.
net_hosts() {
  ip netns add "${net}c"
  ip -n "${net}c" link set lo up
  for k in $(seq 1 "$1"); do
    ip netns add "${net}w$k"
    ip -n "${net}w$k" link set lo up
    ip link add "${net}c$k" type veth peer name "${net}w$k"
    ip link set "${net}c$k" netns "${net}c"
    ip link set "${net}w$k" netns "${net}w$k"
    ip -n "${net}c" addr add "10.77.$k.1/24" dev "${net}c$k"
    ip -n "${net}w$k" addr add "10.77.$k.2/24" dev "${net}w$k"
    ip -n "${net}c" link set "${net}c$k" up
    ip -n "${net}w$k" link set "${net}w$k" up
  done
}

net_cleanup() {
  for ns in $(ip netns list | awk '{print $1}' | grep "^${net}"); do
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null || true
    ip netns del "$ns" 2> /dev/null || true
  done
}

# in_coordinator CMD...: runs CMD on the coordinator's host; in_worker K CMD...: on worker host K.
in_coordinator() { ip netns exec "${net}c" "$@"; }
in_worker() {
  local k=$1
  shift
  ip netns exec "${net}w$k" "$@"
}

# Faults on worker k's link.
# link_down K / link_up K: the link loses its carrier (a cable pulled): packets go nowhere, and
# neither side's connection is reset.
link_down() { ip -n "${net}c" link set "${net}c$1" down; }
link_up() { ip -n "${net}c" link set "${net}c$1" up; }
# silence K / unsilence K: the link stays up and drops every packet both ways (a firewall that
# drops, a peer that vanished): no reset, no error, only silence.
silence() {
  in_worker "$1" iptables -A INPUT -j DROP
  in_worker "$1" iptables -A OUTPUT -j DROP
}
unsilence() { in_worker "$1" iptables -F; }
