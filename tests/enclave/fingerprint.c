/* tests/enclave/fingerprint.c — the helper of test_fingerprint.c: what a
 * run can observe of its kernel surroundings, and a writer into every
 * channel a run could leave a mark in (tests/redteam/carry_channels.c).
 *
 *   fingerprint  prints one "field<TAB>value" line per item: the inet
 *                sockets' availability, the whole of /proc/net, the mount
 *                table, the namespaces, the System V IPC tables, the POSIX
 *                message queues the writer makes, host and domain name,
 *                the cgroups, the limits, every readable sysctl under
 *                /proc/sys/net, what binding the writer's ports and names
 *                says, /tmp, /work (but .git) and the run's processes.
 *                Values that differ between two fresh enclaves without
 *                saying anything about what earlier runs did are
 *                normalised, each with its reason below.
 *   write        writes the marker CARRY_MARKER(channel) into every
 *                channel, once per run (the first call; later calls in the
 *                same run do nothing), and prints what each write said.
 *
 * It runs inside sandboxes: system headers only, no library of the
 * project (the test binds a copy of it into the sandbox). */
#include "../redteam/carry_channels.c"

#include <ctype.h>
#include <limits.h>

#include "core/hash.h"

#define FP_LINE 8192

/* One field: the value's non-printable bytes escaped, so that each field
 * stays one line. */
static void field(const char *name, const char *value) {
    printf("%s\t", name);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        if (*p == '\\') fputs("\\\\", stdout);
        else if (isprint(*p)) putchar(*p);
        else printf("\\x%02x", *p);
    putchar('\n');
}

static void field_errno(const char *name, int err) {
    char v[64];
    snprintf(v, sizeof v, "error %s", strerrorname_np(err) ? strerrorname_np(err) : "?");
    field(name, v);
}

static void chomp(char *line) { line[strcspn(line, "\n")] = '\0'; }

/* Replaces whitespace-separated column `col` (0-based) of `line` with
 * `with`; the columns are then separated by single spaces (a column's
 * width follows the widest value). */
static void replace_column(char *line, int col, const char *with) {
    char out[FP_LINE];
    size_t o = 0;
    const char *p = line + strspn(line, " \t");
    for (int c = 0; *p && o < sizeof out - 1; c++) {
        const char *end = p + strcspn(p, " \t");
        const char *src = c == col ? with : p;
        size_t n = c == col ? strlen(with) : (size_t)(end - p);
        if (n > sizeof out - 2 - o) n = sizeof out - 2 - o;
        if (c > 0) out[o++] = ' ';
        memcpy(out + o, src, n);
        o += n;
        p = end + strspn(end, " \t");
    }
    out[o] = '\0';
    snprintf(line, FP_LINE, "%s", out);
}

/* Replaces the number after " key " (sockstat's "key value" pairs). */
static void replace_after(char *line, const char *key) {
    char pat[64], out[FP_LINE];
    snprintf(pat, sizeof pat, " %s ", key);
    char *p = strstr(line, pat);
    if (!p) return;
    char *num = p + strlen(pat), *end = num + strspn(num, "0123456789-");
    snprintf(out, sizeof out, "%.*sN%s", (int)(num - line), line, end);
    snprintf(line, FP_LINE, "%s", out);
}

/* Per-line normalisation of /proc/net: only what is the machine's (shared
 * by every network namespace, changing all the time with the host's own
 * traffic) or an address, which two fresh enclaves never have the same. */
static void normalise_net(const char *rel, int lineno, char *line) {
    if (strcmp(rel, "softnet_stat") == 0) {
        /* per-CPU packet counts of the whole machine (no header) */
        snprintf(line, FP_LINE, "(per-CPU counters of the machine)");
    } else if (strncmp(rel, "stat/", 5) == 0) {
        /* rt_cache, arp_cache, ndisc_cache: the IPv4 route cache's and the
         * neighbour tables' per-CPU statistics, which are kept per table,
         * and the tables are the machine's; the files of conntrack and
         * synproxy likewise per CPU. Only the header stays. */
        if (lineno > 1) snprintf(line, FP_LINE, "(per-CPU counters of the machine)");
    } else if (strcmp(rel, "netlink") == 0 && lineno > 1) {
        /* sk: the (hashed) kernel address of the socket, and Inode: a number
         * from the machine's one inode counter; every namespace's kernel
         * sockets are new objects */
        replace_column(line, 0, "<sk>");
        replace_column(line, 9, "<inode>");
    } else if (strcmp(rel, "protocols") == 0 && lineno > 1) {
        /* memory and press: the protocol's memory use and pressure, of all
         * namespaces together (proto->memory_allocated) */
        replace_column(line, 3, "<memory>");
        replace_column(line, 4, "<press>");
    } else if (strcmp(rel, "sockstat") == 0) {
        /* orphan, alloc and mem: TCP's orphans, sockets allocated and
         * memory, and UDP's memory, of the whole machine (the per-namespace
         * counts "inuse" and "tw" stay) */
        replace_after(line, "orphan");
        replace_after(line, "alloc");
        replace_after(line, "mem");
    }
}

/* Every line of a file as "PREFIX line N"; a file with a NUL byte as its
 * size and hash. */
static void dump_file(const char *path, const char *prefix, const char *rel, int net) {
    FILE *f = fopen(path, "re");
    char name[PATH_MAX + 64];
    if (!f) {
        field_errno(prefix, errno);
        return;
    }
    char *line = malloc(FP_LINE);
    int lineno = 0;
    while (line && fgets(line, FP_LINE, f)) {
        size_t n = strlen(line);
        if (n + 1 < FP_LINE && !feof(f) && (n == 0 || line[n - 1] != '\n')) {
            /* a NUL inside: binary */
            rewind(f);
            uint64_t h = RLVR_FNV1A64_INIT;
            unsigned long long size = 0;
            unsigned char chunk[4096];
            size_t got;
            while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) h = rlvr_fnv1a64_update(h, chunk, got), size += got;
            char v[96];
            snprintf(v, sizeof v, "binary, %llu bytes, hash %016llx", size, (unsigned long long)h);
            field(prefix, v);
            break;
        }
        chomp(line);
        lineno++;
        if (net) normalise_net(rel, lineno, line);
        snprintf(name, sizeof name, "%s line %d", prefix, lineno);
        field(name, line);
    }
    if (ferror(f)) field_errno(prefix, errno);
    free(line);
    fclose(f);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

/* A tree in name order: each file's lines (`dump`) or each entry's type
 * and size (for /tmp and /work); `skip`: a name not to enter. */
static void walk(const char *dir, const char *rel, int dump, int net, const char *skip) {
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, by_name);
    char path[PATH_MAX], sub[PATH_MAX], name[PATH_MAX + 16];
    if (n < 0) {
        field_errno(dir, errno);
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *e = list[i]->d_name;
        if (strcmp(e, ".") == 0 || strcmp(e, "..") == 0 || (skip && strcmp(e, skip) == 0)) {
            free(list[i]);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, e);
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e);
        struct stat st;
        int ok = lstat(path, &st) == 0;
        if (dump && ok && S_ISDIR(st.st_mode)) {
            walk(path, sub, dump, net, NULL);
        } else if (dump && ok && S_ISREG(st.st_mode)) {
            dump_file(path, path, sub, net);
        } else if (!dump) {
            char v[64];
            snprintf(v, sizeof v, "%s %lld", !ok ? "?" : S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file"
                                             : S_ISLNK(st.st_mode) ? "link" : "other",
                     ok && !S_ISDIR(st.st_mode) ? (long long)st.st_size : 0LL);
            snprintf(name, sizeof name, "%s", path);
            field(name, v);
            if (ok && S_ISDIR(st.st_mode)) walk(path, sub, dump, net, NULL);
        }
        free(list[i]);
    }
    free(list);
}

/* A sysctl: its content on one line, or the error reading it gave. */
static void sysctls(const char *dir) {
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, by_name);
    char path[PATH_MAX];
    for (int i = 0; i < n; i++) {
        const char *e = list[i]->d_name;
        snprintf(path, sizeof path, "%s/%s", dir, e);
        struct stat st;
        if (e[0] != '.' && lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                sysctls(path);
            } else {
                int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
                char v[FP_LINE];
                ssize_t k = fd < 0 ? -1 : read(fd, v, sizeof v - 1);
                int err = errno;
                if (fd >= 0) close(fd);
                if (k < 0) {
                    field_errno(path, err);
                } else {
                    v[k] = '\0';
                    for (char *p = v; *p; p++)
                        if (*p == '\n' && p[1]) *p = '|';
                    chomp(v);
                    field(path, v);
                }
            }
        }
        free(list[i]);
    }
    free(list);
}

/* ---- the mount table ---------------------------------------------------------------------- */

#define FP_MOUNTS 512

typedef struct {
    int id, parent;
    char dev[32], point[PATH_MAX], rest[FP_LINE];
} fp_mount;

/* A mount id as its mount point ("POINT#K" for the K-th mount there). */
static const char *mount_name(const fp_mount *m, int n, int id, char *out, size_t cap) {
    for (int i = 0; i < n; i++) {
        if (m[i].id != id) continue;
        int k = 1;
        for (int j = 0; j < i; j++) k += strcmp(m[j].point, m[i].point) == 0;
        if (k == 1) snprintf(out, cap, "%s", m[i].point);
        else snprintf(out, cap, "%s#%d", m[i].point, k);
        return out;
    }
    return "(outside)";
}

/* Mount ids and parent ids as the mount points they name; anonymous
 * devices (0:N: numbered by the kernel in the order they are made, on the
 * whole machine) as the first mount point that has them; peer-group ids
 * (shared:N, master:N, propagate_from:N: numbered likewise) by their order
 * of appearance. Everything else verbatim, in the table's order. */
static void mounts(void) {
    static fp_mount m[FP_MOUNTS];
    int n = 0, groups[64], n_groups = 0;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) {
        field_errno("mountinfo", errno);
        return;
    }
    char line[FP_LINE], a[PATH_MAX + 16], b[PATH_MAX + 16], name[64];
    while (n < FP_MOUNTS && fgets(line, sizeof line, f)) {
        int used = 0;
        chomp(line);
        if (sscanf(line, "%d %d %31s %*s %4095s %n", &m[n].id, &m[n].parent, m[n].dev, m[n].point, &used) < 4)
            continue;
        /* the root as well: "%*s %s" took ROOT, then MOUNTPOINT */
        char root[PATH_MAX];
        sscanf(line, "%*d %*d %*s %4095s", root);
        snprintf(m[n].rest, sizeof m[n].rest, "%s %s", root, line + used);
        n++;
    }
    fclose(f);
    for (int i = 0; i < n; i++) {
        char dev[PATH_MAX + 8];
        snprintf(dev, sizeof dev, "%s", m[i].dev);
        if (strncmp(m[i].dev, "0:", 2) == 0)
            for (int j = 0; j <= i; j++)
                if (strcmp(m[j].dev, m[i].dev) == 0) {
                    snprintf(dev, sizeof dev, "0:@%s", m[j].point);
                    break;
                }
        /* the optional fields' group ids */
        char out[FP_LINE], *o = out, *save = NULL, rest[FP_LINE];
        snprintf(rest, sizeof rest, "%s", m[i].rest);
        *o = '\0';
        for (char *t = strtok_r(rest, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            char *colon = strchr(t, ':');
            int g;
            if (colon && (strncmp(t, "shared:", 7) == 0 || strncmp(t, "master:", 7) == 0 ||
                          strncmp(t, "propagate_from:", 15) == 0) && sscanf(colon + 1, "%d", &g) == 1) {
                int k = 0;
                while (k < n_groups && groups[k] != g) k++;
                if (k == n_groups && n_groups < 64) groups[n_groups++] = g;
                o += snprintf(o, sizeof out - (size_t)(o - out), "%s%.*s:#%d", o == out ? "" : " ", (int)(colon - t), t,
                              k + 1);
            } else {
                o += snprintf(o, sizeof out - (size_t)(o - out), "%s%s", o == out ? "" : " ", t);
            }
            if (o >= out + sizeof out - 1) break;
        }
        char v[3 * PATH_MAX + FP_LINE];
        snprintf(v, sizeof v, "%s %s %s %s", mount_name(m, n, m[i].id, a, sizeof a),
                 mount_name(m, n, m[i].parent, b, sizeof b), dev, out);
        snprintf(name, sizeof name, "/proc/self/mountinfo line %d", i + 1);
        field(name, v);
    }
}

/* ---- the rest ------------------------------------------------------------------------------ */

static void namespaces(void) {
    static const char *const kinds[] = {"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time",
                                        "time_for_children", "user", "uts"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        char path[64], name[64], v[128];
        snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
        snprintf(name, sizeof name, "ns %s", kinds[i]);
        ssize_t k = readlink(path, v, sizeof v - 1);
        if (k < 0) {
            field_errno(name, errno);
            continue;
        }
        v[k] = '\0';
        field(name, v);
    }
}

/* What binding says: "ok", or the error of socket() or bind(). */
static void bind_result(const char *name, int rc) {
    char v[64];
    if (rc >= 0) {
        close(rc);
        field(name, "ok");
        return;
    }
    snprintf(v, sizeof v, "%s", strerrorname_np(-rc) ? strerrorname_np(-rc) : "?");
    field(name, v);
}

static void binds(void) {
    unsigned short ports[2 * CARRY_N + 1];
    int n = 0;
    ports[n++] = CARRY_LISTEN_PORT;
    for (int ch = 0; ch < CARRY_N; ch++) {
        ports[n++] = carry_port(CARRY_MARKER(ch));
        /* the last of the sockstat channel's sockets in TIME_WAIT */
        if (ch == CARRY_SOCKSTAT) ports[n++] = carry_port(CARRY_MARKER(ch) + CARRY_TIME_WAITS - 1);
    }
    static const struct {
        int family, type;
        const char *what;
    } kinds[] = {{AF_INET, SOCK_STREAM, "tcp 127.0.0.1"}, {AF_INET, SOCK_DGRAM, "udp 127.0.0.1"},
                 {AF_INET6, SOCK_STREAM, "tcp ::1"},       {AF_INET6, SOCK_DGRAM, "udp ::1"}};
    char name[96];
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int i = 0; i < n; i++) {
            snprintf(name, sizeof name, "bind %s port %u", kinds[k].what, ports[i]);
            bind_result(name, carry_bound(kinds[k].family, kinds[k].type, ports[i], 0));
        }
    for (int ch = 0; ch < CARRY_N; ch++) {
        char abstract[64];
        carry_name(abstract, sizeof abstract, "", CARRY_MARKER(ch));
        snprintf(name, sizeof name, "bind unix @%s", abstract);
        bind_result(name, carry_abstract_socket(abstract));
    }
}

static void queues(void) {
    for (int ch = 0; ch < CARRY_N; ch++) {
        char q[64], name[96];
        carry_name(q, sizeof q, "/", CARRY_MARKER(ch));
        snprintf(name, sizeof name, "mqueue %s", q);
        mqd_t d = mq_open(q, O_RDONLY | O_CLOEXEC);
        if (d == (mqd_t)-1) {
            field_errno(name, errno);
        } else {
            field(name, "exists");
            mq_close(d);
        }
    }
}

static void processes(void) {
    struct dirent **list = NULL;
    int n = scandir("/proc", &list, NULL, by_name);
    for (int i = 0; i < n; i++) {
        const char *e = list[i]->d_name;
        char path[300], comm[64] = "", name[300];
        if (e[0] >= '0' && e[0] <= '9') {
            snprintf(path, sizeof path, "/proc/%s/comm", e);
            FILE *f = fopen(path, "re");
            if (f && fgets(comm, sizeof comm, f)) chomp(comm);
            if (f) fclose(f);
            snprintf(name, sizeof name, "process %s", e);
            field(name, comm);
        }
        free(list[i]);
    }
    free(list);
}

static int fingerprint(void) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
        field("inet sockets", "ok");
        close(s);
    } else {
        field_errno("inet sockets", errno);
    }
    walk("/proc/net", "", 1, 1, NULL);
    mounts();
    namespaces();
    walk("/proc/sysvipc", "", 1, 0, NULL);
    queues();
    struct utsname u;
    if (uname(&u) == 0) {
        field("hostname", u.nodename);
        field("domainname", u.domainname);
    }
    dump_file("/proc/self/cgroup", "/proc/self/cgroup", "", 0);
    struct stat st;
    if (stat("/sys/fs/cgroup", &st) == 0) walk("/sys/fs/cgroup", "", 0, 0, NULL);
    else field_errno("/sys/fs/cgroup", errno);
    dump_file("/proc/self/limits", "/proc/self/limits", "", 0);
    sysctls("/proc/sys/net");
    binds();
    walk("/tmp", "", 0, 0, NULL);
    walk("/work", "", 0, 0, ".git");
    processes();
    return fflush(stdout) == 0 ? 0 : 1;
}

static int write_all(void) {
    int once = open("/tmp/rlvr-fingerprint-wrote", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (once < 0) return 0;
    close(once);
    for (int ch = 0; ch < CARRY_N; ch++) {
        int rc = carry_write(ch, CARRY_MARKER(ch));
        char name[128];
        snprintf(name, sizeof name, "write %s", carry_channels[ch].name);
        if (rc == 0) field(name, "ok");
        else field_errno(name, -rc);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "fingerprint") == 0) return fingerprint();
    if (argc == 2 && strcmp(argv[1], "write") == 0) return write_all();
    fprintf(stderr, "usage: %s fingerprint|write\n", argv[0]);
    return 2;
}
