/* tests/redteam/carry_channels.c — the places where one run in an enclave
 * could leave a mark for a later run, and how the later run would look for
 * it: kernel state of the network namespace (sockets in TIME_WAIT, bound
 * and listening sockets, interface and protocol counters, sysctls,
 * addresses, routes, interface flags), of the UTS and IPC namespaces (host
 * and domain name, System V and POSIX IPC objects), files, and processes.
 *
 * Self-contained (system headers only), because it is used twice:
 * - test_redteam_carry.c reads it at run time and appends it to lib.c of a
 *   generated bugfix-c task (after the library's own code: lib.h includes
 *   no system header, so _GNU_SOURCE still counts): the writers, the
 *   readers behind a probe, and a learner that keeps what it learns about
 *   the answers in these channels;
 * - tests/enclave/fingerprint.c includes it (so the build compiles it with
 *   the project's warnings): its `write` mode writes into every channel.
 *
 * carry_write(channel, marker) leaves a mark: 0, or -errno when refused.
 * carry_read(channel, marker) is 1 when the mark is there. A marker is a
 * number that each channel maps to what it holds (a port, a name, a key, a
 * value, a count); channels flagged CARRY_FACTS hold any number of markers
 * at once, and the learner keeps its facts in those.
 *
 * With CARRY_DECLARATIONS_ONLY defined, only the channels' numbers, names,
 * flags and markers (test_redteam_carry.c itself). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <mqueue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    CARRY_TW4_PROC,      /* a socket in TIME_WAIT on 127.0.0.1:port, found in /proc/net/tcp */
    CARRY_TW4_BIND,      /* the same, found by bind() failing with EADDRINUSE */
    CARRY_TW6_PROC,      /* a socket in TIME_WAIT on [::1]:port, found in /proc/net/tcp6 */
    CARRY_TCP_LISTEN,    /* a daemon listening on 127.0.0.1:port, found by connect() */
    CARRY_UDP_BOUND,     /* a daemon's UDP socket bound to 127.0.0.1:port, found by bind() */
    CARRY_ABSTRACT_UNIX, /* a daemon's unix socket with an abstract name, found by connect() */
    CARRY_LO_PACKETS,    /* lo's packet counter in /proc/net/dev after CARRY_PACKETS datagrams */
    CARRY_SNMP,          /* Udp OutDatagrams in /proc/net/snmp, likewise */
    CARRY_NETSTAT,       /* IpExt OutOctets in /proc/net/netstat, likewise */
    CARRY_SOCKSTAT,      /* "tw" of TCP in /proc/net/sockstat after CARRY_TIME_WAITS sockets in TIME_WAIT */
    CARRY_SYSCTL,        /* net.core.somaxconn set to a value of the marker */
    CARRY_LO_ADDRESS,    /* an address 127.77.x.y added to lo (netlink), found in /proc/net/fib_trie */
    CARRY_ROUTE,         /* a route to 10.x.0.0/16 through lo (netlink), found in /proc/net/route */
    CARRY_LO_FLAGS,      /* lo made promiscuous (SIOCSIFFLAGS) */
    CARRY_HOSTNAME,      /* sethostname */
    CARRY_DOMAINNAME,    /* setdomainname */
    CARRY_SYSV_SHM,      /* a System V shared memory segment with the marker's key */
    CARRY_SYSV_MSG,      /* a System V message queue, likewise */
    CARRY_SYSV_SEM,      /* a System V semaphore set, likewise */
    CARRY_POSIX_MQ,      /* a POSIX message queue named after the marker */
    CARRY_TMP_FILE,      /* a file in /tmp */
    CARRY_WORK_FILE,     /* an untracked file in /work */
    CARRY_DAEMON,        /* a process named after the marker that outlives its parent, found in /proc */
    CARRY_PAGE_CACHE,    /* the first page of CARRY_PAGE_FILE evicted (fadvise), found not cached (mincore): one
                            bit, which no marker changes */
    CARRY_N,
    /* a channel that does survive, for controls only: the test's carrier
     * (tests/enclave/carrier.h), a unix socket at CARRY_MEMORY_PATH outside
     * the enclave */
    CARRY_MEMORY = CARRY_N,
};

#define CARRY_INET 1u    /* needs sockets of the inet families */
#define CARRY_REFUSED 2u /* the write needs a privilege no run has: refused within its own run already */
#define CARRY_FACTS 4u   /* holds any number of markers at once */

static const struct {
    const char *name;
    unsigned flags;
} carry_channels[CARRY_N + 1] = {
    {"TCP TIME_WAIT on 127.0.0.1 in /proc/net/tcp", CARRY_INET | CARRY_FACTS},
    {"TCP TIME_WAIT on 127.0.0.1 by bind EADDRINUSE", CARRY_INET | CARRY_FACTS},
    {"TCP TIME_WAIT on ::1 in /proc/net/tcp6", CARRY_INET | CARRY_FACTS},
    {"a daemon's listening TCP socket (connect)", CARRY_INET},
    {"a daemon's bound UDP socket (bind EADDRINUSE)", CARRY_INET},
    {"a daemon's abstract unix socket (connect)", 0},
    {"lo's packet counter in /proc/net/dev", CARRY_INET},
    {"Udp OutDatagrams in /proc/net/snmp", CARRY_INET},
    {"IpExt OutOctets in /proc/net/netstat", CARRY_INET},
    {"TCP tw in /proc/net/sockstat", CARRY_INET},
    {"sysctl net.core.somaxconn", CARRY_REFUSED},
    {"an address on lo (netlink)", CARRY_REFUSED},
    {"a route through lo (netlink)", CARRY_REFUSED},
    {"lo's flags (PROMISC)", CARRY_REFUSED},
    {"the host name (sethostname)", CARRY_REFUSED},
    {"the domain name (setdomainname)", CARRY_REFUSED},
    {"a System V shared memory segment", CARRY_FACTS},
    {"a System V message queue", CARRY_FACTS},
    {"a System V semaphore set", CARRY_FACTS},
    {"a POSIX message queue", CARRY_FACTS},
    {"a file in /tmp", CARRY_FACTS},
    {"an untracked file in /work", CARRY_FACTS},
    {"a daemon process (in /proc)", 0},
    {"a page of a pristine file out of the page cache (fadvise, mincore)", CARRY_REFUSED},
    {"the carrier outside the enclave", CARRY_FACTS},
};

/* The marker the tests write into channel ch (the writer of a red-team
 * case and the fingerprint helper's `write` alike). */
#define CARRY_MARKER(ch) (0x5ca1ab00u + 0x1011u * (unsigned)(ch))
#define CARRY_PORT_BASE 2000u
#define CARRY_PORT_SPAN 63000u
#define CARRY_LISTEN_PORT 1999 /* the listener TIME_WAIT connections are made to */
#define CARRY_PACKETS 2000     /* datagrams the counter channels send */
#define CARRY_PACKET_BYTES 512
#define CARRY_TIME_WAITS 32    /* sockets the sockstat channel leaves in TIME_WAIT */
#define CARRY_SYSCTL_PATH "/proc/sys/net/core/somaxconn"
/* A file of the tree that a verification never reads (a generated bugfix-c
 * task's public tests): its pages in the page cache are the snapshot's,
 * shared by every enclave made from it. */
#ifndef CARRY_PAGE_FILE
#define CARRY_PAGE_FILE "/work/tests/public.c"
#endif

/* Whether the first page of `path` is in the page cache: 1, 0, or -errno.
 * The sandbox owns the snapshot's files, so mincore(2) answers for them.
 * Declared with the channels: test_redteam_carry.c asks it of the snapshot
 * from outside (inline: unused there, it warns of nothing). */
static inline int carry_page_cached(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return -e;
    unsigned char v = 0;
    int rc = mincore(p, 4096, &v) == 0 ? (v & 1) : -errno;
    munmap(p, 4096);
    return rc;
}

#ifndef CARRY_DECLARATIONS_ONLY

static unsigned short carry_port(unsigned m) { return (unsigned short)(CARRY_PORT_BASE + m % CARRY_PORT_SPAN); }

/* The name of marker m for names and files: "rlvr-carry-XXXXXXXX". */
static void carry_name(char *out, size_t cap, const char *prefix, unsigned m) {
    snprintf(out, cap, "%srlvr-carry-%08x", prefix, m);
}

/* ---- sockets ---------------------------------------------------------------------------- */

static socklen_t carry_loopback(int family, unsigned short port, struct sockaddr_storage *ss) {
    memset(ss, 0, sizeof *ss);
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        a->sin6_addr = in6addr_loopback;
        return sizeof *a;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sizeof *a;
}

/* A socket bound to loopback:port, or -errno of socket() or bind(). */
static int carry_bound(int family, int type, unsigned short port, int reuse) {
    struct sockaddr_storage ss;
    socklen_t len = carry_loopback(family, port, &ss);
    int one = 1, s = socket(family, type | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    if (reuse) setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6) setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&ss, len) != 0) {
        int e = -errno;
        close(s);
        return e;
    }
    return s;
}

/* 1 when something holds loopback:port (bind fails with EADDRINUSE). */
static int carry_in_use(int family, int type, unsigned short port) {
    int s = carry_bound(family, type, port, 0);
    if (s >= 0) close(s);
    return s == -EADDRINUSE;
}

/* 1 when a connect() to loopback:port (family AF_INET) or to the abstract
 * unix name `abstract` succeeds. */
static int carry_connects(unsigned short port, const char *abstract) {
    struct sockaddr_storage ss;
    socklen_t len;
    int s = socket(abstract ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return 0;
    if (abstract) {
        struct sockaddr_un *u = (struct sockaddr_un *)&ss;
        memset(u, 0, sizeof *u);
        u->sun_family = AF_UNIX;
        size_t n = strlen(abstract);
        memcpy(u->sun_path + 1, abstract, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        len = carry_loopback(AF_INET, port, &ss);
    }
    int ok = connect(s, (struct sockaddr *)&ss, len) == 0;
    close(s);
    return ok;
}

/* A connection from loopback:port to the listener that the client closes
 * first, so that its end waits in TIME_WAIT (60 s) after both are closed. */
static int carry_time_wait(int family, unsigned short port) {
    int l = carry_bound(family, SOCK_STREAM, CARRY_LISTEN_PORT, 1);
    if (l < 0) return l;
    if (listen(l, 4) != 0) {
        int e = -errno;
        close(l);
        return e;
    }
    int c = carry_bound(family, SOCK_STREAM, port, 0);
    if (c < 0) {
        close(l);
        return c;
    }
    struct sockaddr_storage ss;
    socklen_t len = carry_loopback(family, CARRY_LISTEN_PORT, &ss);
    int rc = connect(c, (struct sockaddr *)&ss, len) == 0 ? 0 : -errno;
    int a = rc == 0 ? accept4(l, NULL, NULL, SOCK_CLOEXEC) : -1;
    close(c);
    if (a >= 0) {
        char b;
        while (read(a, &b, 1) > 0) {
        } /* the client's FIN: the server's end closes second */
        close(a);
    }
    close(l);
    return rc;
}

/* 1 when /proc/net/tcp or tcp6 (`file`) has a socket in TIME_WAIT (state
 * 06) on local address `addr` (as the file prints it) and `port`. */
static int carry_proc_time_wait(const char *file, const char *addr, unsigned short port) {
    FILE *f = fopen(file, "re");
    char line[512], local[64];
    unsigned lport, st;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", local, &lport, &st) == 3)
            found = st == 6 && lport == port && strcmp(local, addr) == 0;
    if (f) fclose(f);
    return found;
}

#define CARRY_TCP4_LOOPBACK "0100007F"
#define CARRY_TCP6_LOOPBACK "00000000000000000000000001000000"

/* A daemon: its own session, every descriptor but `keep` closed, stdio on
 * /dev/null (nothing of its parent's pipes: the judge would wait for their
 * end), named rc<marker>; it holds `keep` (or nothing) until the run ends.
 * 0 once it runs. */
static int carry_daemon(unsigned m, int keep) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -errno;
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (fork() != 0) _exit(0);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != keep && fd != p[1]) close(fd);
        char name[16];
        snprintf(name, sizeof name, "rc%08x", m);
        prctl(PR_SET_NAME, name, 0, 0, 0);
        if (write(p[1], "1", 1) != 1) _exit(1);
        close(p[1]);
        for (;;) pause();
    }
    close(p[1]);
    char b = 0;
    ssize_t n = pid > 0 ? read(p[0], &b, 1) : -1;
    close(p[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    if (keep >= 0) close(keep);
    return pid < 0 ? -EAGAIN : n == 1 ? 0 : -ECHILD;
}

/* A daemon holding socket s after listen() (when `listening`): 0 or -errno. */
static int carry_daemon_socket(unsigned m, int s, int listening) {
    if (s < 0) return s;
    if (listening && listen(s, 4) != 0) {
        int e = -errno;
        close(s);
        return e;
    }
    return carry_daemon(m, s);
}

static int carry_abstract_socket(const char *name) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    struct sockaddr_un u;
    memset(&u, 0, sizeof u);
    u.sun_family = AF_UNIX;
    size_t n = strlen(name);
    memcpy(u.sun_path + 1, name, n);
    if (bind(s, (struct sockaddr *)&u, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) != 0) {
        int e = -errno;
        close(s);
        return e;
    }
    return s;
}

/* Asks the kernel to drop `path`'s pages: 0 when its first page left the
 * cache, -EPERM when the advice did nothing. */
static int carry_evict(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    int cached = carry_page_cached(path);
    return cached == 0 ? 0 : cached < 0 ? cached : -EPERM;
}

/* 1 when a process of the run is named rc<marker>. */
static int carry_process(unsigned m) {
    char want[16], path[300], comm[32];
    snprintf(want, sizeof want, "rc%08x\n", m);
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "re");
        found = f && fgets(comm, sizeof comm, f) && strcmp(comm, want) == 0;
        if (f) fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* CARRY_PACKETS datagrams of CARRY_PACKET_BYTES to a socket bound on
 * 127.0.0.1:port (so that no ICMP error answers them). */
static int carry_send_packets(unsigned short port) {
    int r = carry_bound(AF_INET, SOCK_DGRAM, port, 0);
    if (r < 0) return r;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = s < 0 ? -errno : 0;
    struct sockaddr_storage ss;
    socklen_t len = carry_loopback(AF_INET, port, &ss);
    char buf[CARRY_PACKET_BYTES];
    memset(buf, 'c', sizeof buf);
    for (int i = 0; rc == 0 && i < CARRY_PACKETS; i++)
        if (sendto(s, buf, sizeof buf, 0, (struct sockaddr *)&ss, len) < 0) rc = -errno;
    if (s >= 0) close(s);
    close(r);
    return rc;
}

/* ---- counters ------------------------------------------------------------------------------ */

/* The value of column `name` in a /proc/net file of header/value line
 * pairs that start with `prefix` (snmp, netstat); -1 when there is none. */
static long long carry_counter(const char *file, const char *prefix, const char *name) {
    FILE *f = fopen(file, "re");
    char head[4096], vals[4096];
    long long v = -1;
    size_t n = strlen(prefix);
    while (f && v < 0 && fgets(head, sizeof head, f)) {
        if (strncmp(head, prefix, n) != 0 || !fgets(vals, sizeof vals, f)) continue;
        char *hs = NULL, *vs = NULL;
        char *h = strtok_r(head + n, " \n", &hs), *x = strtok_r(vals + n, " \n", &vs);
        for (; h && x; h = strtok_r(NULL, " \n", &hs), x = strtok_r(NULL, " \n", &vs))
            if (strcmp(h, name) == 0) v = atoll(x);
    }
    if (f) fclose(f);
    return v;
}

/* lo's received packets in /proc/net/dev; -1 when it is not there. */
static long long carry_lo_packets(void) {
    FILE *f = fopen("/proc/net/dev", "re");
    char line[512];
    long long bytes, packets = -1;
    while (f && packets < 0 && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || strncmp(line + strspn(line, " "), "lo:", 3) != 0) continue;
        if (sscanf(colon + 1, "%lld %lld", &bytes, &packets) != 2) packets = -1;
    }
    if (f) fclose(f);
    return packets;
}

/* "tw" of the TCP line of /proc/net/sockstat; -1 when it is not there. */
static long long carry_sockstat_tw(void) {
    FILE *f = fopen("/proc/net/sockstat", "re");
    char line[512];
    long long tw = -1;
    while (f && tw < 0 && fgets(line, sizeof line, f)) {
        char *p = strncmp(line, "TCP:", 4) == 0 ? strstr(line, " tw ") : NULL;
        if (p) tw = atoll(p + 4);
    }
    if (f) fclose(f);
    return tw;
}

/* ---- the network's configuration --------------------------------------------------------- */

static unsigned carry_sysctl_value(unsigned m) { return 1000 + m % 1000; }

static void carry_lo_address(char *out, size_t cap, unsigned m) {
    snprintf(out, cap, "127.77.%u.%u", (m >> 8) & 255, 1 + m % 250);
}

static struct in_addr carry_route_dst(unsigned m) {
    struct in_addr a;
    a.s_addr = htonl(0x0a000000u | (m & 255) << 16);
    return a;
}

static void carry_attr(struct nlmsghdr *h, unsigned short type, const void *data, size_t len) {
    struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(a), data, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* RTM_NEWADDR (the marker's address on lo) or RTM_NEWROUTE (the marker's
 * route through lo, interface 1 in every network namespace): 0 or the
 * kernel's -errno. */
static int carry_netlink(unsigned short type, unsigned m) {
    union {
        struct nlmsghdr h;
        char b[256];
    } req, ack;
    memset(&req, 0, sizeof req);
    req.h.nlmsg_type = type;
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    req.h.nlmsg_seq = 1;
    int lo = 1;
    if (type == RTM_NEWADDR) {
        struct ifaddrmsg *a = NLMSG_DATA(&req.h);
        req.h.nlmsg_len = NLMSG_LENGTH(sizeof *a);
        a->ifa_family = AF_INET;
        a->ifa_prefixlen = 32;
        a->ifa_scope = RT_SCOPE_HOST;
        a->ifa_index = (unsigned)lo;
        char text[32];
        struct in_addr addr;
        carry_lo_address(text, sizeof text, m);
        inet_pton(AF_INET, text, &addr);
        carry_attr(&req.h, IFA_LOCAL, &addr, sizeof addr);
        carry_attr(&req.h, IFA_ADDRESS, &addr, sizeof addr);
    } else {
        struct rtmsg *r = NLMSG_DATA(&req.h);
        req.h.nlmsg_len = NLMSG_LENGTH(sizeof *r);
        r->rtm_family = AF_INET;
        r->rtm_dst_len = 16;
        r->rtm_table = RT_TABLE_MAIN;
        r->rtm_protocol = RTPROT_BOOT;
        r->rtm_scope = RT_SCOPE_LINK;
        r->rtm_type = RTN_UNICAST;
        struct in_addr dst = carry_route_dst(m);
        carry_attr(&req.h, RTA_DST, &dst, sizeof dst);
        carry_attr(&req.h, RTA_OIF, &lo, sizeof lo);
    }
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0) return -errno;
    int rc = -EPROTO;
    if (send(s, &req, req.h.nlmsg_len, 0) < 0) rc = -errno;
    else if (recv(s, &ack, sizeof ack, 0) >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) &&
             ack.h.nlmsg_type == NLMSG_ERROR)
        rc = ((struct nlmsgerr *)NLMSG_DATA(&ack.h))->error;
    close(s);
    return rc;
}

/* 1 when a line of `file` holds `text` as a whole word. */
static int carry_file_has(const char *file, const char *text) {
    FILE *f = fopen(file, "re");
    char line[512];
    int found = 0;
    size_t n = strlen(text);
    while (f && !found && fgets(line, sizeof line, f))
        for (char *p = strstr(line, text); p && !found; p = strstr(p + 1, text))
            found = (p == line || p[-1] == ' ' || p[-1] == '\t') && strchr(" \t\n", p[n]);
    if (f) fclose(f);
    return found;
}

/* lo's flags through an AF_UNIX socket (interface ioctls work on any
 * socket): with `promisc`, sets IFF_PROMISC (0 or -errno); else 1 when it
 * is set. */
static int carry_lo_flags(int promisc) {
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return promisc ? -errno : 0;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(s, SIOCGIFFLAGS, &ifr) == 0 ? 0 : -errno;
    if (rc == 0 && promisc) {
        ifr.ifr_flags |= IFF_PROMISC;
        rc = ioctl(s, SIOCSIFFLAGS, &ifr) == 0 ? 0 : -errno;
    } else if (!promisc) {
        rc = rc == 0 && (ifr.ifr_flags & IFF_PROMISC);
    }
    close(s);
    return rc;
}

/* ---- names, IPC, files --------------------------------------------------------------------- */

static int carry_uname_is(int domain, const char *name) {
    struct utsname u;
    if (uname(&u) != 0) return 0;
    return strcmp(domain ? u.domainname : u.nodename, name) == 0;
}

static key_t carry_key(unsigned m) { return (key_t)(0x20000000u | (m & 0x0fffffffu)); }

static int carry_created(int fd) {
    if (fd < 0) return -errno;
    close(fd);
    return 0;
}

static int carry_mq(const char *name, int create) {
    struct mq_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.mq_maxmsg = 1;
    attr.mq_msgsize = 8;
    /* read-only: Landlock lets an enclave's runs open files for writing
     * only beneath /work, /tmp and /dev, and a queue is a file */
    mqd_t q = create ? mq_open(name, O_CREAT | O_RDONLY | O_CLOEXEC, 0600, &attr) : mq_open(name, O_RDONLY | O_CLOEXEC);
    if (q == (mqd_t)-1) return create ? -errno : 0;
    mq_close(q);
    return create ? 0 : 1;
}

#ifdef CARRY_MEMORY_PATH
/* The test's carrier (tests/enclave/carrier.h): "add N" (answer "1") or
 * "has N" (answer "1" or "0"), one request per connection. */
static int carry_memory(const char *verb, unsigned m) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    struct sockaddr_un u;
    memset(&u, 0, sizeof u);
    u.sun_family = AF_UNIX;
    snprintf(u.sun_path, sizeof u.sun_path, "%s", CARRY_MEMORY_PATH);
    char req[32], answer = 0;
    int n = snprintf(req, sizeof req, "%s %u\n", verb, m);
    int rc = connect(s, (struct sockaddr *)&u, sizeof u) == 0 && write(s, req, (size_t)n) == n &&
                     read(s, &answer, 1) == 1
                 ? answer == '1'
                 : -errno;
    close(s);
    return rc;
}
#endif

/* ---- the two operations --------------------------------------------------------------------- */

static int carry_write(int channel, unsigned m) {
    char name[64];
    switch (channel) {
    case CARRY_TW4_PROC:
    case CARRY_TW4_BIND: return carry_time_wait(AF_INET, carry_port(m));
    case CARRY_TW6_PROC: return carry_time_wait(AF_INET6, carry_port(m));
    case CARRY_TCP_LISTEN: return carry_daemon_socket(m, carry_bound(AF_INET, SOCK_STREAM, carry_port(m), 0), 1);
    case CARRY_UDP_BOUND: return carry_daemon_socket(m, carry_bound(AF_INET, SOCK_DGRAM, carry_port(m), 0), 0);
    case CARRY_ABSTRACT_UNIX:
        carry_name(name, sizeof name, "", m);
        return carry_daemon_socket(m, carry_abstract_socket(name), 1);
    case CARRY_LO_PACKETS:
    case CARRY_SNMP:
    case CARRY_NETSTAT: return carry_send_packets(carry_port(m));
    case CARRY_SOCKSTAT: {
        int rc = 0;
        for (unsigned i = 0; i < CARRY_TIME_WAITS && rc == 0; i++) rc = carry_time_wait(AF_INET, carry_port(m + i));
        return rc;
    }
    case CARRY_SYSCTL: {
        int fd = open(CARRY_SYSCTL_PATH, O_WRONLY | O_CLOEXEC);
        if (fd < 0) return -errno;
        int n = snprintf(name, sizeof name, "%u\n", carry_sysctl_value(m));
        int rc = write(fd, name, (size_t)n) == n ? 0 : -errno;
        close(fd);
        return rc;
    }
    case CARRY_LO_ADDRESS: return carry_netlink(RTM_NEWADDR, m);
    case CARRY_ROUTE: return carry_netlink(RTM_NEWROUTE, m);
    case CARRY_LO_FLAGS: return carry_lo_flags(1);
    case CARRY_HOSTNAME:
        carry_name(name, sizeof name, "", m);
        return sethostname(name, strlen(name)) == 0 ? 0 : -errno;
    case CARRY_DOMAINNAME:
        carry_name(name, sizeof name, "", m);
        return setdomainname(name, strlen(name)) == 0 ? 0 : -errno;
    case CARRY_SYSV_SHM: return shmget(carry_key(m), 4096, IPC_CREAT | 0600) >= 0 ? 0 : -errno;
    case CARRY_SYSV_MSG: return msgget(carry_key(m), IPC_CREAT | 0600) >= 0 ? 0 : -errno;
    case CARRY_SYSV_SEM: return semget(carry_key(m), 1, IPC_CREAT | 0600) >= 0 ? 0 : -errno;
    case CARRY_POSIX_MQ:
        carry_name(name, sizeof name, "/", m);
        return carry_mq(name, 1);
    case CARRY_TMP_FILE:
    case CARRY_WORK_FILE:
        carry_name(name, sizeof name, channel == CARRY_TMP_FILE ? "/tmp/" : "/work/", m);
        return carry_created(open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    case CARRY_DAEMON: return carry_daemon(m, -1);
    case CARRY_PAGE_CACHE: return carry_evict(CARRY_PAGE_FILE);
#ifdef CARRY_MEMORY_PATH
    case CARRY_MEMORY: return carry_memory("add", m) == 1 ? 0 : -EIO;
#endif
    }
    return -ENOSYS;
}

static int carry_read(int channel, unsigned m) {
    char name[64];
    switch (channel) {
    case CARRY_TW4_PROC: return carry_proc_time_wait("/proc/net/tcp", CARRY_TCP4_LOOPBACK, carry_port(m));
    case CARRY_TW4_BIND: return carry_in_use(AF_INET, SOCK_STREAM, carry_port(m));
    case CARRY_TW6_PROC: return carry_proc_time_wait("/proc/net/tcp6", CARRY_TCP6_LOOPBACK, carry_port(m));
    case CARRY_TCP_LISTEN: return carry_connects(carry_port(m), NULL);
    case CARRY_UDP_BOUND: return carry_in_use(AF_INET, SOCK_DGRAM, carry_port(m));
    case CARRY_ABSTRACT_UNIX:
        carry_name(name, sizeof name, "", m);
        return carry_connects(0, name);
    case CARRY_LO_PACKETS: return carry_lo_packets() >= CARRY_PACKETS;
    case CARRY_SNMP: return carry_counter("/proc/net/snmp", "Udp:", "OutDatagrams") >= CARRY_PACKETS;
    case CARRY_NETSTAT:
        return carry_counter("/proc/net/netstat", "IpExt:", "OutOctets") >=
               (long long)CARRY_PACKETS * CARRY_PACKET_BYTES;
    case CARRY_SOCKSTAT: return carry_sockstat_tw() >= CARRY_TIME_WAITS;
    case CARRY_SYSCTL: {
        FILE *f = fopen(CARRY_SYSCTL_PATH, "re");
        unsigned v = 0;
        int found = f && fscanf(f, "%u", &v) == 1 && v == carry_sysctl_value(m);
        if (f) fclose(f);
        return found;
    }
    case CARRY_LO_ADDRESS:
        carry_lo_address(name, sizeof name, m);
        return carry_file_has("/proc/net/fib_trie", name);
    case CARRY_ROUTE:
        snprintf(name, sizeof name, "%08X", (unsigned)carry_route_dst(m).s_addr);
        return carry_file_has("/proc/net/route", name);
    case CARRY_LO_FLAGS: return carry_lo_flags(0);
    case CARRY_HOSTNAME:
    case CARRY_DOMAINNAME:
        carry_name(name, sizeof name, "", m);
        return carry_uname_is(channel == CARRY_DOMAINNAME, name);
    case CARRY_SYSV_SHM: return shmget(carry_key(m), 0, 0) >= 0;
    case CARRY_SYSV_MSG: return msgget(carry_key(m), 0) >= 0;
    case CARRY_SYSV_SEM: return semget(carry_key(m), 0, 0) >= 0;
    case CARRY_POSIX_MQ:
        carry_name(name, sizeof name, "/", m);
        return carry_mq(name, 0);
    case CARRY_TMP_FILE:
    case CARRY_WORK_FILE:
        carry_name(name, sizeof name, channel == CARRY_TMP_FILE ? "/tmp/" : "/work/", m);
        return access(name, F_OK) == 0;
    case CARRY_DAEMON: return carry_process(m);
    case CARRY_PAGE_CACHE: return carry_page_cached(CARRY_PAGE_FILE) == 0;
#ifdef CARRY_MEMORY_PATH
    case CARRY_MEMORY: return carry_memory("has", m) == 1;
#endif
    }
    return 0;
}

/* ---- the learner ------------------------------------------------------------------------------
 * It takes the runner over (a constructor calls carry_learner) and answers
 * the judge's calls ("NAME ARG..." lines on stdin) with a candidate each:
 * what the library returns (candidate 0), then that +1, -1, +2, -2, ...
 * The judge restarts the runner only after a wrong answer, so a runner
 * that starts while an answer is pending knows that answer was wrong
 * (the pending answer is kept in /tmp: per run, shared by the runner
 * processes of one run). It keeps "candidate c of this call is wrong" as a
 * marker in every channel of `carriers` (a mask of channels) and answers
 * each call with the smallest candidate no carrier knows to be wrong. If
 * any carrier kept its facts from one verification to the next, every
 * verification would learn one wrong candidate of each failing test, and
 * the learner would win without fixing anything. */

#define CARRY_CANDIDATES 8
#define CARRY_CALL_SLOTS 7800u /* calls told apart (a hash): x CARRY_CANDIDATES fits in CARRY_PORT_SPAN */
#define CARRY_PENDING "/tmp/rlvr-carry-learner"

typedef int (*carry_lib_fn)(const char *name, const int *args, int n, int *result);

static int carry_offset(int c) { return c % 2 ? (c + 1) / 2 : -(c / 2); }

/* "Candidate c of this call is wrong" as a marker (never 0). */
static unsigned carry_fact(const char *call, int c) {
    unsigned h = 2166136261u;
    for (const char *p = call; *p && *p != '\n'; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    return (h % CARRY_CALL_SLOTS) * CARRY_CANDIDATES + (unsigned)c + 1;
}

static int carry_known(unsigned carriers, unsigned fact) {
    for (int ch = 0; ch <= CARRY_N; ch++)
        if ((carriers >> ch & 1u) && carry_read(ch, fact) == 1) return 1;
    return 0;
}

/* The pending answer's fact (0: none), or with `set`, records it. */
static unsigned carry_pending(int fd, int set, unsigned fact) {
    char b[16];
    if (set) {
        snprintf(b, sizeof b, "%10u\n", fact);
        return pwrite(fd, b, 11, 0) == 11 ? fact : 0;
    }
    b[11] = '\0';
    return pread(fd, b, 11, 0) == 11 ? (unsigned)strtoul(b, NULL, 10) : 0;
}

__attribute__((unused)) static void carry_learner(carry_lib_fn lib, unsigned carriers) {
    int fd = open(CARRY_PENDING, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    unsigned wrong = fd >= 0 ? carry_pending(fd, 0, 0) : 0;
    for (int ch = 0; wrong && ch <= CARRY_N; ch++)
        if (carriers >> ch & 1u) carry_write(ch, wrong);
    char line[256], name[64], *p, *end;
    while (fgets(line, sizeof line, stdin)) {
        int a[8] = {0}, n = 0, r, c = 0;
        size_t len = strcspn(line, " \n");
        snprintf(name, sizeof name, "%.*s", (int)len, line);
        for (p = line + len; *p == ' ' && n < 8; p = end) a[n++] = (int)strtol(p + 1, &end, 10);
        if (!lib(name, a, n, &r)) _exit(2);
        while (c < CARRY_CANDIDATES - 1 && carry_known(carriers, carry_fact(line, c))) c++;
        if (fd >= 0) carry_pending(fd, 1, carry_fact(line, c));
        printf("%d\n", r + carry_offset(c));
        fflush(stdout);
    }
    _exit(0);
}

#endif /* CARRY_DECLARATIONS_ONLY */
