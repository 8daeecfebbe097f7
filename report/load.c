/* report/load.c — what the page is made of, read from the run directory:
 * the metrics tables, the configuration and the manifest's attributes, the
 * gate reports (JSON, "rlvr-gate/1") and the sweep tables (CSV). */
#include "core/error.h"
#include "eval/gate.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/file.h"
#include "io/manifest.h"
#include "report/internal.h"
#include "rl/config.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PATH_CAP RLVR_REPORT_PATH_CAP

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- metrics and configuration ---------------------------------------------------- */

/* Wall time from the first step's start to the last step's end. */
static double wall_time(const rlvr_metrics_table *t) {
    const double *tu = t->value[RLVR_METRIC_TIME_UNIX], *st = t->value[RLVR_METRIC_STEP_TIME_S];
    if (!tu || t->n_rows == 0) return NAN;
    double first = tu[0] - (st && isfinite(st[0]) ? st[0] : 0);
    return tu[t->n_rows - 1] - first;
}

static void steps_of(rlvr_report_steps *s, const rlvr_metrics_table *t, bool present) {
    *s = (rlvr_report_steps){.present = present, .rows = t->n_rows, .wall_s = wall_time(t)};
    if (t->n_rows > 0) s->first_step = t->step[0], s->last_step = t->step[t->n_rows - 1];
}

static double *steps_as_x(const rlvr_metrics_table *t) {
    double *x = malloc((t->n_rows ? (size_t)t->n_rows : 1) * sizeof *x);
    for (int64_t i = 0; x && i < t->n_rows; i++) x[i] = (double)t->step[i];
    return x;
}

static int load_metrics(rlvr_report *r, const char *run) {
    char rl_path[PATH_CAP], sft_path[PATH_CAP];
    rlvr_report_join(rl_path, run, "metrics.h5");
    rlvr_report_join(sft_path, run, "sft/metrics.h5");
    bool has_rl = is_file(rl_path), has_sft = is_file(sft_path);
    if (!has_rl && !has_sft)
        return RLVR_FAIL(RLVR_ENOTFOUND,
                         "%s has no metrics: neither %s (written by rlvr train) nor %s (written by rlvr sft) exists; "
                         "give the run directory (the --out of rlvr sft/train)",
                         run, rl_path, sft_path);
    if (has_rl) RLVR_TRY(rlvr_metrics_read(&r->rl, rl_path));
    if (has_sft) RLVR_TRY(rlvr_metrics_read(&r->sft, sft_path));
    if (!has_rl) rlvr_report_note(r, "no %s (rlvr train has not run here): RL charts skipped", rl_path);
    else if (r->rl.n_rows == 0) rlvr_report_note(r, "%s has no rows yet: RL charts skipped", rl_path);
    if (!has_sft) rlvr_report_note(r, "no %s (no SFT stage in this run): SFT chart skipped", sft_path);
    steps_of(&r->header.rl, &r->rl, has_rl);
    steps_of(&r->header.sft, &r->sft, has_sft);
    r->rl_x = steps_as_x(&r->rl);
    r->sft_x = steps_as_x(&r->sft);
    if (!r->rl_x || !r->sft_x) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    return 0;
}

/* The configuration text: the manifest's, else the latest checkpoint's
 * (RL, then SFT). Returns a malloc'd copy or NULL, the source in
 * header.config_from; the first manifest found in `manifest`. */
static char *config_text(rlvr_report *r, const char *run, char *manifest) {
    static const char *const manifests[] = {"manifest.h5", "sft/manifest.h5"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_CAP];
        rlvr_report_join(path, run, manifests[i]);
        char *text = NULL;
        if (!is_file(path)) continue;
        if (!manifest[0]) snprintf(manifest, PATH_CAP, "%s", path);
        if (rlvr_io_read_text(path, "/run/config", &text) == 0 && text && text[0]) {
            snprintf(r->header.config_from, PATH_CAP, "%s", path);
            return text;
        }
        free(text);
    }
    static const char *const dirs[] = {"checkpoints", "sft/checkpoints"};
    for (size_t i = 0; i < 2; i++) {
        char dir[PATH_CAP], path[PATH_CAP];
        rlvr_report_join(dir, run, dirs[i]);
        rlvr_checkpoint *ck = NULL;
        if (rlvr_checkpoint_latest(dir, path, sizeof path) < 0 || rlvr_checkpoint_open(&ck, path) < 0) continue;
        const rlvr_checkpoint_info *info = rlvr_checkpoint_info_of(ck);
        char *text = info->config_text && info->config_text[0] ? strdup(info->config_text) : NULL;
        rlvr_checkpoint_close(ck);
        if (text) {
            snprintf(r->header.config_from, PATH_CAP, "%s", path);
            return text;
        }
    }
    rlvr_error_clear();
    return NULL;
}

static void load_config(rlvr_report *r, const char *run, const rlvr_config_key *const *schemas, char *manifest) {
    char *text = config_text(r, run, manifest);
    if (!text) {
        rlvr_report_note(r, "no stored configuration (no manifest.h5 and no checkpoint with one): entropy target "
                            "band, seed and config hash not shown");
        return;
    }
    if (rlvr_config_parse(&r->config, text, r->header.config_from, schemas) < 0) {
        rlvr_report_note(r, "the configuration stored in %s does not parse with this rlvr (%s): entropy target band "
                            "not shown",
                         r->header.config_from, rlvr_error_last());
        rlvr_error_clear();
    } else {
        r->header.has_config = true;
        r->header.config_hash = rlvr_config_hash(r->config);
    }
    free(text);
}

static void manifest_attr(const char *manifest, const char *name, char *buf, size_t cap) {
    buf[0] = '\0';
    if (manifest[0] && rlvr_manifest_read_attr(manifest, name, buf, cap) < 0) buf[0] = '\0';
    rlvr_error_clear();
}

/* The header: the run's name, seed and the manifest's attributes. */
static void load_header(rlvr_report *r, const char *run, const char *manifest) {
    rlvr_report_header *h = &r->header;
    rlvr_io_settings io;
    bool has_io = r->config && rlvr_io_settings_read(&io, r->config) == 0;
    rlvr_error_clear();
    if (has_io) h->has_seed = true, h->seed = io.seed;
    manifest_attr(manifest, "run_name", h->name, sizeof h->name);
    if (!h->name[0] && has_io) snprintf(h->name, sizeof h->name, "%s", io.name);
    if (!h->name[0]) {
        char dir[PATH_CAP]; /* the directory's own name, "a" of "runs/a/" */
        snprintf(dir, sizeof dir, "%s", run);
        size_t n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
        const char *slash = strrchr(dir, '/');
        snprintf(h->name, sizeof h->name, "%s", slash && slash[1] ? slash + 1 : dir);
    }
    manifest_attr(manifest, "status", h->status, sizeof h->status);
    manifest_attr(manifest, "started_utc", h->started, sizeof h->started);
    manifest_attr(manifest, "finished_utc", h->finished, sizeof h->finished);
    manifest_attr(manifest, "git_commit", h->git_commit, sizeof h->git_commit);
}

/* ---- gate reports ------------------------------------------------------------------- */

static int compare_gates(const void *a, const void *b) {
    const rlvr_report_gate *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return strcmp(x->file, y->file);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static double jnum(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int8_t jpassed(const json_t *obj) {
    const json_t *v = json_object_get(obj, "passed");
    return json_is_boolean(v) ? (int8_t)json_is_true(v) : -1;
}

/* The parts of one report the page shows. */
static int gate_from_json(rlvr_report_gate *g, const json_t *root) {
    const json_t *criteria = json_object_get(root, "criteria");
    const json_t *t = json_object_get(criteria, "target"), *reg = json_object_get(criteria, "regression");
    const json_t *cp = json_object_get(criteria, "compliance"), *step = json_object_get(root, "candidate_step");
    g->step = json_is_integer(step) ? (int64_t)json_integer_value(step) : -1;
    g->version = jnum(root, "candidate_version");
    g->passed = jpassed(root);
    g->target = (rlvr_report_gate_target){jnum(t, "base_pass1"), jnum(t, "cand_pass1"), jnum(t, "mean_diff"),
                                          jnum(t, "low"), jnum(t, "high"), jnum(t, "tolerance"), jpassed(t)};
    g->regression_passed = jpassed(reg);
    g->compliance_value = jnum(cp, "value");
    g->compliance_threshold = jnum(cp, "threshold");
    g->compliance_passed = jpassed(cp);
    const json_t *fams = json_object_get(reg, "families");
    size_t n = json_array_size(fams);
    g->families = n ? calloc(n, sizeof *g->families) : NULL;
    if (n && !g->families) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(fams, i);
        const char *name = json_string_value(json_object_get(f, "name"));
        rlvr_report_gate_family *out = &g->families[g->n_families++];
        *out = (rlvr_report_gate_family){NULL, jnum(f, "base_pass1"), jnum(f, "cand_pass1"), jnum(f, "low"),
                                         jnum(f, "high"), jpassed(f)};
        if (name && !(out->name = strdup(name))) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    return 0;
}

static void gate_free(rlvr_report_gate *g) {
    for (size_t i = 0; i < g->n_families; i++) free(g->families[i].name);
    free(g->families);
}

static void add_gate(rlvr_report *r, const char *path) {
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    const char *format = json_string_value(json_object_get(root, "format"));
    if (!root || !format || strcmp(format, RLVR_GATE_FORMAT) != 0 ||
        !json_is_object(json_object_get(root, "criteria"))) {
        rlvr_report_note(r, "%s skipped: %s", path,
                         !root ? err.text : "not a gate report (format \"rlvr-gate/1\" with \"criteria\")");
        json_decref(root);
        return;
    }
    rlvr_report_gate *all = realloc(r->gates, (r->n_gates + 1) * sizeof *all);
    if (!all) {
        r->failed = true;
        json_decref(root);
        return;
    }
    r->gates = all;
    rlvr_report_gate *g = &r->gates[r->n_gates++];
    *g = (rlvr_report_gate){0};
    snprintf(g->file, PATH_CAP, "%s", path);
    if (gate_from_json(g, root) < 0) r->failed = true;
    json_decref(root);
}

static void load_gates(rlvr_report *r, const char *run) {
    char dir[PATH_CAP];
    rlvr_report_join(dir, run, "gate");
    DIR *d = opendir(dir);
    if (!d) {
        rlvr_report_note(r, "no %s/*.json (no rlvr gate --promote has run): gate charts skipped", dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        char path[PATH_CAP];
        if (!ends_with(e->d_name, ".json")) continue;
        rlvr_report_join(path, dir, e->d_name);
        if (is_file(path)) add_gate(r, path);
    }
    closedir(d);
    if (r->n_gates) qsort(r->gates, r->n_gates, sizeof *r->gates, compare_gates);
    else rlvr_report_note(r, "%s holds no gate report: gate charts skipped", dir);
}

/* ---- sweep tables ------------------------------------------------------------------- */

/* Splits one CSV line in place (RFC 4180 quotes, "" inside quotes). */
static int csv_split(char *line, char **fields, int cap) {
    int n = 0;
    char *p = line;
    while (n < cap) {
        char *out = p;
        fields[n++] = p;
        if (*p == '"') {
            char *q = p + 1;
            for (;;) {
                if (!*q) break;
                if (*q == '"' && q[1] == '"') *out++ = '"', q += 2;
                else if (*q == '"') {
                    q++;
                    break;
                } else *out++ = *q++;
            }
            p = q;
        }
        while (*p && *p != ',') *out++ = *p++;
        bool more = *p == ',';
        *out = '\0';
        if (!more) break;
        p++;
    }
    return n;
}

static double csv_number(const char *s) {
    char *end;
    double v = strtod(s, &end);
    return end == s ? NAN : v;
}

enum { SW_STEP, SW_FAMILY, SW_K, SW_PASS, SW_LOW, SW_HIGH, SW_NCOLS };
static const char *const sweep_columns[SW_NCOLS] = {"step", "family", "k", "pass_at_k", "low", "high"};

static int sweep_header(int *col, char **fields, int n, rlvr_report *r, const char *path) {
    for (int c = 0; c < SW_NCOLS; c++) {
        col[c] = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(fields[i], sweep_columns[c]) == 0) col[c] = i;
        if (col[c] < 0) {
            rlvr_report_note(r, "%s skipped: no column \"%s\" in its header", path, sweep_columns[c]);
            return -1;
        }
    }
    return 0;
}

static void strip_eol(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

static void add_sweep(rlvr_report *r, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        rlvr_report_note(r, "%s skipped: cannot be opened", path);
        return;
    }
    rlvr_report_sweep t = {0};
    snprintf(t.path, PATH_CAP, "%s", path);
    char line[8192];
    char *fields[32];
    int col[SW_NCOLS];
    bool ok = fgets(line, sizeof line, f) != NULL;
    if (ok) strip_eol(line);
    ok = ok && sweep_header(col, fields, csv_split(line, fields, 32), r, path) == 0;
    size_t cap = 0;
    while (ok && fgets(line, sizeof line, f)) {
        strip_eol(line);
        if (!line[0]) continue;
        int n = csv_split(line, fields, 32);
        if (n <= col[SW_STEP] || n <= col[SW_FAMILY] || n <= col[SW_K] || n <= col[SW_PASS] || n <= col[SW_LOW] ||
            n <= col[SW_HIGH])
            continue;
        if (t.n == cap) {
            cap = cap ? 2 * cap : 64;
            rlvr_report_sweep_row *rows = realloc(t.rows, cap * sizeof *rows);
            if (!rows) break;
            t.rows = rows;
        }
        rlvr_report_sweep_row *row = &t.rows[t.n++];
        snprintf(row->family, sizeof row->family, "%s", fields[col[SW_FAMILY]]);
        row->k = (int64_t)csv_number(fields[col[SW_K]]);
        row->step = csv_number(fields[col[SW_STEP]]);
        row->pass = csv_number(fields[col[SW_PASS]]);
        row->low = csv_number(fields[col[SW_LOW]]);
        row->high = csv_number(fields[col[SW_HIGH]]);
    }
    fclose(f);
    if (ok && t.n == 0) rlvr_report_note(r, "%s has no rows: sweep chart skipped", path);
    rlvr_report_sweep *all = ok && t.n ? realloc(r->sweeps, (r->n_sweeps + 1) * sizeof *all) : NULL;
    if (!all) {
        free(t.rows);
        return;
    }
    r->sweeps = all;
    r->sweeps[r->n_sweeps++] = t;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* RUN/sweep* /sweep.csv in name order, then the given sweeps. */
static void load_sweeps(rlvr_report *r, const char *run, const rlvr_report_options *o) {
    DIR *d = opendir(run);
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;)
        if (strncmp(e->d_name, "sweep", 5) == 0) names[n++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        char dir[PATH_CAP], csv[PATH_CAP];
        rlvr_report_join(dir, run, names[i] ? names[i] : "");
        rlvr_report_join(csv, dir, "sweep.csv");
        if (names[i] && is_dir(dir) && is_file(csv)) add_sweep(r, csv);
        free(names[i]);
    }
    for (size_t i = 0; i < o->n_sweeps; i++) {
        char csv[PATH_CAP];
        if (is_file(o->sweeps[i])) snprintf(csv, PATH_CAP, "%s", o->sweeps[i]);
        else rlvr_report_join(csv, o->sweeps[i], "sweep.csv");
        if (is_file(csv)) add_sweep(r, csv);
        else rlvr_report_note(r, "--sweep %s: no %s", o->sweeps[i], csv);
    }
    if (r->n_sweeps == 0 && o->n_sweeps == 0)
        rlvr_report_note(r, "no %s/sweep*/sweep.csv (no rlvr sweep has run): sweep charts skipped", run);
}

/* ---- the whole run ----------------------------------------------------------------------- */

int rlvr_report_load(rlvr_report *r, const rlvr_report_options *o) {
    if (!is_dir(o->run)) return RLVR_FAIL(RLVR_ENOTFOUND, "%s is not a directory (give a run directory)", o->run);
    RLVR_TRY(load_metrics(r, o->run));
    char manifest[PATH_CAP] = ""; /* the first manifest found, for the header */
    load_config(r, o->run, o->schemas, manifest);
    load_header(r, o->run, manifest);
    load_gates(r, o->run);
    load_sweeps(r, o->run, o);
    return 0;
}

void rlvr_report_free_inputs(rlvr_report *r) {
    rlvr_metrics_table_free(&r->rl);
    rlvr_metrics_table_free(&r->sft);
    free(r->rl_x);
    free(r->sft_x);
    rlvr_config_free(r->config);
    for (size_t i = 0; i < r->n_gates; i++) gate_free(&r->gates[i]);
    free(r->gates);
    for (size_t i = 0; i < r->n_sweeps; i++) free(r->sweeps[i].rows);
    free(r->sweeps);
}
