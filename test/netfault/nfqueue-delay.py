#!/usr/bin/env python3
"""Holds every packet of one netfilter queue for a fixed time, then lets it through: the delay fault
of the network-fault harness (test/netfault), made here because this kernel has no `netem` qdisc.

Usage: nfqueue-delay.py <queue-num> <delay-ms>. Python's standard library only (a raw netlink socket
speaking nfnetlink_queue), so nothing needs installing. Packets reach the queue through an iptables
`-j NFQUEUE --queue-num <n> --queue-bypass` rule; with this process gone they flow undelayed.
"""
import heapq, os, select, signal, socket, struct, sys, time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NF_ACCEPT = 1


def attr(kind, payload):
    body = struct.pack('=HH', 4 + len(payload), kind) + payload
    return body + b'\0' * (-len(body) % 4)


def message(msg, queue, attrs, flags=NLM_F_REQUEST):
    body = struct.pack('=BBH', socket.AF_UNSPEC, 0, socket.htons(queue)) + b''.join(attrs)
    return struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg, flags, 0, 0) + body


def main():
    queue, delay = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.send(message(NFQNL_MSG_CONFIG, queue, [attr(NFQA_CFG_CMD, struct.pack('!BBH', NFQNL_CFG_CMD_BIND, 0, socket.AF_INET))], NLM_F_REQUEST | NLM_F_ACK))
    sock.send(message(NFQNL_MSG_CONFIG, queue, [attr(NFQA_CFG_PARAMS, struct.pack('!IB', 0, NFQNL_COPY_META))], NLM_F_REQUEST | NLM_F_ACK))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    held = []  # (release time, packet id), released in order
    print('bound', flush=True)
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        if select.select([sock], [], [], timeout)[0]:
            data = sock.recv(1 << 16)
            at = 0
            while at + 16 <= len(data):
                length, kind = struct.unpack_from('=IH', data, at)
                if length < 16:
                    break
                if kind == NLMSG_ERROR:
                    code = struct.unpack_from('=i', data, at + 16)[0]
                    if code != 0:
                        sys.exit('nfqueue config refused: errno %d' % -code)
                elif kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                    a = at + 20
                    while a + 4 <= at + length:
                        alen, akind = struct.unpack_from('=HH', data, a)
                        if alen < 4:
                            break
                        if akind & 0x7fff == NFQA_PACKET_HDR:
                            heapq.heappush(held, (time.monotonic() + delay, struct.unpack_from('!I', data, a + 4)[0]))
                        a += (alen + 3) & ~3
                at += (length + 3) & ~3
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, pid = heapq.heappop(held)
            sock.send(message(NFQNL_MSG_VERDICT, queue, [attr(NFQA_VERDICT_HDR, struct.pack('!II', NF_ACCEPT, pid))]))


if __name__ == '__main__':
    main()
