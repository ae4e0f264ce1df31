/* SPDX-License-Identifier: MIT */
/* ykblackhole.c: a server that takes every packet and answers none. */

/*
 * usage: ykblackhole ADDRESS PORT
 *
 * Binds a UDP socket and a listening TCP socket on the IPv4 ADDRESS and
 * PORT, prints "ready" and then reads and drops whatever arrives, never
 * answering, until killed.  The tests point a resolver at it (a DNS
 * server that does not answer), to show that a lookup cannot stall the
 * KDC beyond its time budget.
 */

#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define YKB_BUF_LEN 4096

int
main(int argc, char **argv)
{
    struct sockaddr_in sin;
    char buf[YKB_BUF_LEN];
    int u, t, one = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: ykblackhole ADDRESS PORT\n");
        return 2;
    }
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
        fprintf(stderr, "ykblackhole: not an IPv4 address: %s\n", argv[1]);
        return 2;
    }
    u = socket(AF_INET, SOCK_DGRAM, 0);
    t = socket(AF_INET, SOCK_STREAM, 0);
    if (u < 0 || t < 0 ||
        setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(u, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        bind(t, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        listen(t, 16) != 0) {
        perror("ykblackhole");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    /* TCP connections wait in the backlog, never accepted. */
    for (;;) {
        if (recv(u, buf, sizeof(buf), 0) < 0)
            sleep(1);
    }
}
