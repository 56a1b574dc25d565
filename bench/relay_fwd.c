// relay_fwd: the minimal UDP forwarder that bench/relay measures the voice relay against. It listens
// on 127.0.0.1 (a free port, printed as host:port on stdout), learns each peer from its first
// datagram (up to MAX_PEERS), and sends every datagram on to every other peer, reading and
// writing in batches with recvmmsg and sendmmsg. No parsing, no tokens, no limits: the floor
// of what a relay on this machine can do. Built by bench/run.sh; stopped with SIGTERM.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 64
#define MAX_PEERS 32
#define MAX_DGRAM 1500

static struct sockaddr_in peers[MAX_PEERS];
static int npeers;

static int peer_index(const struct sockaddr_in *a) {
	for (int i = 0; i < npeers; i++) {
		if (peers[i].sin_port == a->sin_port && peers[i].sin_addr.s_addr == a->sin_addr.s_addr) {
			return i;
		}
	}
	if (npeers == MAX_PEERS) {
		return -1;
	}
	peers[npeers] = *a;
	return npeers++;
}

int main(void) {
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		perror("bind");
		return 1;
	}
	socklen_t len = sizeof addr;
	getsockname(fd, (struct sockaddr *)&addr, &len);
	printf("127.0.0.1:%d\n", ntohs(addr.sin_port));
	fflush(stdout);

	static char bufs[BATCH][MAX_DGRAM];
	static struct sockaddr_in from[BATCH];
	static struct iovec iov[BATCH];
	static struct mmsghdr in[BATCH];
	static struct iovec oiov[BATCH * MAX_PEERS];
	static struct mmsghdr out[BATCH * MAX_PEERS];
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = MAX_DGRAM;
			memset(&in[i].msg_hdr, 0, sizeof in[i].msg_hdr);
			in[i].msg_hdr.msg_iov = &iov[i];
			in[i].msg_hdr.msg_iovlen = 1;
			in[i].msg_hdr.msg_name = &from[i];
			in[i].msg_hdr.msg_namelen = sizeof from[i];
		}
		int n = recvmmsg(fd, in, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			continue;
		}
		int k = 0;
		for (int i = 0; i < n; i++) {
			int self = peer_index(&from[i]);
			for (int j = 0; j < npeers; j++) {
				if (j == self) {
					continue;
				}
				oiov[k].iov_base = bufs[i];
				oiov[k].iov_len = in[i].msg_len;
				memset(&out[k].msg_hdr, 0, sizeof out[k].msg_hdr);
				out[k].msg_hdr.msg_iov = &oiov[k];
				out[k].msg_hdr.msg_iovlen = 1;
				out[k].msg_hdr.msg_name = &peers[j];
				out[k].msg_hdr.msg_namelen = sizeof peers[j];
				k++;
			}
		}
		for (int sent = 0; sent < k;) {
			int m = sendmmsg(fd, out + sent, k - sent, 0);
			sent += m > 0 ? m : 1; // skip a datagram the kernel refused
		}
	}
}
