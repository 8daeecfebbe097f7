/* envs/import_swe.c — `rlvr tasks import swe-bench`: SWE-bench instances
 * (JSONL) as rlvr tasks (envs/sources.h).
 *
 * Each instance names its repository ("owner/name"), found in the spec
 * table (how its tests run) and in a directory of repositories or bundles.
 * The files `test_patch` leaves become the hidden tests, `patch` the
 * reference, `problem_statement` the prompt; the task's repository is the
 * scrubbed copy of the history up to `base_commit`. An instance that cannot
 * become a task is refused on a line that names FILE:LINE and the field. */
#include "envs/history.h"
#include "envs/sources_internal.h"

#include "core/error.h"
#include "core/sys.h"
#include "enclave/fsutil.h"
#include "enclave/reason.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One repository of the spec table, opened when first needed. */
typedef struct {
    char *name;            /* "owner/name" */
    rlvr_repo_facts facts;
    git_repository *repo;  /* NULL until opened */
    char path[4096];       /* what the provisional specs name */
    char *unbundled;       /* where a bundle was unpacked (NULL when none) */
} swe_repo;

typedef struct {
    const rlvr_swe_import_options *o;
    rlvr_sandbox_host *host;
    const char *out_dir;
    char out_abs[4096];
    swe_repo *repos;
    size_t n_repos;
    FILE *report;
    rlvr_import_summary *sum;
    char where[4200]; /* "FILE:LINE" of the instance at hand */
} importer;

static int load_specs(importer *im) {
    char *text = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(im->o->specs, &text, &len));
    json_error_t jerr;
    json_t *table = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!table || !json_is_object(table) || json_object_size(table) == 0) {
        json_decref(table);
        return rlvr_error_set(RLVR_EFORMAT,
                              "spec table %s: must be a JSON object {\"owner/name\": {\"test_command\": ...}, ...}%s%s",
                              im->o->specs, table ? "" : ": ", table ? "" : jerr.text);
    }
    im->repos = calloc(json_object_size(table), sizeof *im->repos);
    char dir[4096];
    rlvr_fs_dirname(dir, sizeof dir, im->o->specs);
    const char *key;
    json_t *v;
    int rc = im->repos ? 0 : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    json_object_foreach(table, key, v) {
        if (rc < 0) break;
        swe_repo *r = &im->repos[im->n_repos];
        char source[4400];
        snprintf(source, sizeof source, "%s: %s", im->o->specs, key);
        char *facts = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        rc = facts ? rlvr_repo_facts_parse(&r->facts, facts, source, dir) : RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        free(facts);
        if (rc == 0 && !(r->name = strdup(key))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        if (rc == 0) im->n_repos++;
    }
    json_decref(table);
    return rc;
}

static void free_repos(importer *im) {
    for (size_t i = 0; i < im->n_repos; i++) {
        swe_repo *r = &im->repos[i];
        free(r->name);
        rlvr_repo_facts_free(&r->facts);
        git_repository_free(r->repo);
        if (r->unbundled) rlvr_fs_remove_tree(r->unbundled);
        free(r->unbundled);
    }
    free(im->repos);
}

/* The repository's directory or bundle under repos_dir: NAME, NAME.git,
 * NAME.bundle, OWNER__NAME, OWNER__NAME.git, OWNER__NAME.bundle. */
static bool find_repo_path(const importer *im, const char *full, char *out, size_t cap) {
    const char *slash = strrchr(full, '/');
    char swe[512];
    snprintf(swe, sizeof swe, "%s", full);
    for (char *c = swe; *c; c++)
        if (*c == '/') {
            memmove(c + 2, c + 1, strlen(c + 1) + 1);
            c[0] = c[1] = '_';
            break;
        }
    const char *names[] = {slash ? slash + 1 : full, swe};
    const char *suffixes[] = {"", ".git", ".bundle"};
    for (size_t n = 0; n < 2; n++)
        for (size_t s = 0; s < 3; s++) {
            struct stat st;
            snprintf(out, cap, "%s/%s%s", im->o->repos_dir, names[n], suffixes[s]);
            if (stat(out, &st) == 0) return true;
        }
    return false;
}

static int open_repo(importer *im, swe_repo *r) {
    if (r->repo) return 0;
    char path[4400];
    if (!find_repo_path(im, r->name, path, sizeof path))
        return rlvr_error_set(RLVR_ENOTFOUND, "repository \"%s\" is not in %s (as NAME, NAME.git, NAME.bundle or "
                                              "OWNER__NAME)",
                              r->name, im->o->repos_dir);
    RLVR_TRY(rlvr_history_open(&r->repo, path, im->out_abs, &r->unbundled));
    rlvr_history_path(r->repo, r->path, sizeof r->path);
    return 0;
}

/* ---- one instance ------------------------------------------------------------------ */

typedef struct {
    const char *instance_id, *repo, *base_commit, *patch, *test_patch, *problem;
    rlvr_str_list f2p, p2p;
    int64_t created_at;
    bool has_created_at;
} instance;

static int refuse(importer *im, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(importer *im, const char *field, const char *fmt, ...) {
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return rlvr_error_set(RLVR_EFORMAT, "instance %s: field \"%s\": %s", im->where, field, what);
}

static int get_field(importer *im, json_t *o, const char *key, const char **out) {
    json_t *v = json_object_get(o, key);
    if (!v) return refuse(im, key, "missing");
    if (!json_is_string(v)) return refuse(im, key, "must be a string");
    *out = json_string_value(v);
    return 0;
}

/* A JSON array of test names, or a string holding one (as SWE-bench stores them). */
static int get_names(importer *im, json_t *o, const char *key, rlvr_str_list *out) {
    json_t *v = json_object_get(o, key), *parsed = NULL;
    if (!v) return refuse(im, key, "missing");
    if (json_is_string(v)) v = parsed = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
    int rc = json_is_array(v) ? 0 : refuse(im, key, "must be an array of test names, or a string holding one");
    size_t i;
    json_t *name;
    json_array_foreach(v, i, name) {
        if (rc < 0) break;
        rc = json_is_string(name) && json_string_length(name) ? rlvr_str_list_add_unique(out, json_string_value(name))
                                                               : refuse(im, key, "holds an entry that is no test name");
    }
    json_decref(parsed);
    return rc;
}

static int read_instance(importer *im, json_t *o, instance *in) {
    if (!json_is_object(o)) return refuse(im, "(line)", "must be a JSON object");
    RLVR_TRY(get_field(im, o, "instance_id", &in->instance_id));
    RLVR_TRY(get_field(im, o, "repo", &in->repo));
    RLVR_TRY(get_field(im, o, "base_commit", &in->base_commit));
    RLVR_TRY(get_field(im, o, "patch", &in->patch));
    RLVR_TRY(get_field(im, o, "test_patch", &in->test_patch));
    RLVR_TRY(get_field(im, o, "problem_statement", &in->problem));
    RLVR_TRY(get_names(im, o, "FAIL_TO_PASS", &in->f2p));
    RLVR_TRY(get_names(im, o, "PASS_TO_PASS", &in->p2p));
    if (in->f2p.n == 0) return refuse(im, "FAIL_TO_PASS", "is empty: a task needs a test its fix makes pass");
    json_t *created = json_object_get(o, "created_at");
    if (json_is_string(created) && rlvr_task_time_parse(json_string_value(created), &in->created_at) == 0)
        in->has_created_at = true;
    else if (created) return refuse(im, "created_at", "must be a time such as 2023-03-08T14:35:21Z");
    return 0;
}

static swe_repo *repo_of(importer *im, const char *name) {
    for (size_t i = 0; i < im->n_repos; i++)
        if (strcmp(im->repos[i].name, name) == 0) return &im->repos[i];
    return NULL;
}

/* Runs the untouched base once; a FAIL_TO_PASS test that passes there
 * refuses the instance. */
static int check_base(importer *im, const swe_repo *r, const rlvr_task *task) {
    rlvr_verify_task *vt = NULL;
    int rc = source_verify_task_new(&vt, im->host, task, r->facts.wall_s, false);
    rlvr_verify_run run = {0};
    if (rc == 0) rc = rlvr_verify_run_once(vt, "", 0, im->o->seed, 0, &run);
    if (rc == 0 && run.infra) rc = refuse(im, "base_commit", "the tests could not run there (%s)", rlvr_reason_name(run.reason));
    for (size_t i = 0; rc == 0 && i < task->fail_to_pass.n; i++) {
        int count = 0;
        const rlvr_tap_test *t = rlvr_tap_find(&run.tap, task->fail_to_pass.items[i], &count);
        if (t && count == 1 && t->status == RLVR_TAP_PASS)
            rc = refuse(im, "FAIL_TO_PASS", "test \"%s\" passes at base_commit %.12s without the fix",
                        task->fail_to_pass.items[i], task->base_commit);
    }
    rlvr_verify_run_free(&run);
    rlvr_verify_task_free(vt);
    return rc;
}

typedef struct {
    char id[96], hidden_rel[256], hidden_dir[4400], repo_rel[256];
    rlvr_str_list hidden, public_files;
} made_paths;

static bool is_test_of(const char *path, void *facts) { return rlvr_repo_facts_classify(facts, path) == 't'; }

static json_t *instance_spec(const importer *im, const swe_repo *r, const instance *in, const made_paths *p,
                             bool provisional) {
    json_t *meta = json_pack("{s:s, s:s, s:s}", "source", "swe-bench", "instance_id", in->instance_id, "repo", in->repo);
    source_task st = {.id = p->id, .family = "swe-bench", .split_key = in->repo, .prompt = in->problem,
                      .split = im->o->split, .repository = provisional ? r->path : p->repo_rel,
                      .base_commit = in->base_commit, .hidden_root = provisional ? p->hidden_dir : p->hidden_rel,
                      .hidden_files = &p->hidden, .public_files = &p->public_files, .fail_to_pass = &in->f2p,
                      .pass_to_pass = &in->p2p, .reference_patch = in->patch, .created_at = in->created_at,
                      .has_created_at = in->has_created_at, .metadata = meta};
    json_t *spec = meta ? source_task_json(&st, &r->facts) : NULL;
    json_decref(meta);
    return spec;
}

/* The base tree, the test patch applied to it (its files written as the
 * hidden tests) and the reference checked to apply. */
static int make_files(importer *im, swe_repo *r, const instance *in, made_paths *p) {
    git_oid base;
    git_commit *commit = NULL;
    git_tree *tree = NULL, *with_tests = NULL, *fixed = NULL;
    if (git_oid_fromstr(&base, in->base_commit) < 0 || strlen(in->base_commit) != 40)
        return refuse(im, "base_commit", "\"%s\" is not a 40-digit commit id", in->base_commit);
    if (git_commit_lookup(&commit, r->repo, &base) < 0)
        return refuse(im, "base_commit", "%.12s is not a commit of %s", in->base_commit, r->name);
    int rc = git_commit_tree(&tree, commit) < 0 ? rlvr_error_set(RLVR_EGIT, "reading the tree of %.12s", in->base_commit)
                                                : 0;
    if (rc == 0 && rlvr_history_apply(r->repo, tree, in->test_patch, &with_tests, &p->hidden) < 0)
        rc = refuse(im, "test_patch", "%s", rlvr_error_last());
    if (rc == 0 && p->hidden.n == 0) rc = refuse(im, "test_patch", "leaves no test file");
    if (rc == 0 && rlvr_history_apply(r->repo, tree, in->patch, &fixed, NULL) < 0)
        rc = refuse(im, "patch", "%s", rlvr_error_last());
    if (rc == 0) rc = rlvr_history_tree_paths(r->repo, tree, is_test_of, &r->facts, &p->public_files);
    if (rc == 0) rc = rlvr_history_write_files(r->repo, with_tests, p->hidden.items, p->hidden.n, p->hidden_dir);
    git_tree_free(fixed);
    git_tree_free(with_tests);
    git_tree_free(tree);
    git_commit_free(commit);
    return rc;
}

static int import_instance(importer *im, const instance *in, swe_repo *r) {
    made_paths p = {0};
    char clean[96];
    source_clean_name(clean, sizeof clean, in->instance_id);
    snprintf(p.id, sizeof p.id, "%.63s", clean);
    snprintf(p.hidden_rel, sizeof p.hidden_rel, "hidden/%s", p.id);
    snprintf(p.hidden_dir, sizeof p.hidden_dir, "%s/%s", im->out_abs, p.hidden_rel);
    snprintf(p.repo_rel, sizeof p.repo_rel, "repos/%s.git", p.id);
    struct stat st;
    char spec_path[4400], repo_dir[4400];
    snprintf(spec_path, sizeof spec_path, "%s/%s.json", im->out_abs, p.id);
    snprintf(repo_dir, sizeof repo_dir, "%s/%s", im->out_abs, p.repo_rel);
    int rc = 0;
    if (lstat(spec_path, &st) == 0 || lstat(p.hidden_dir, &st) == 0 || lstat(repo_dir, &st) == 0)
        rc = refuse(im, "instance_id", "task %s exists already in %s; nothing is overwritten", p.id, im->out_dir);
    if (rc == 0) rc = open_repo(im, r);
    if (rc == RLVR_ENOTFOUND) rc = refuse(im, "repo", "%s", rlvr_error_last());
    bool wrote_hidden = false;
    if (rc == 0) {
        wrote_hidden = true;
        rc = make_files(im, r, in, &p);
    }
    rlvr_task *task = NULL;
    json_t *spec = rc == 0 ? instance_spec(im, r, in, &p, true) : NULL;
    if (rc == 0 && !spec) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0 && source_task_parse(&task, spec, im->where, "/") < 0) rc = refuse(im, "(spec)", "%s", rlvr_error_last());
    if (rc == 0 && im->o->check_base) rc = check_base(im, r, task);
    rlvr_task_free(task);
    task = NULL;
    json_decref(spec);
    spec = NULL;
    git_oid base;
    if (rc == 0 && git_oid_fromstr(&base, in->base_commit) == 0) rc = rlvr_history_write_scrubbed(r->repo, &base, repo_dir);
    if (rc == 0 && !(spec = instance_spec(im, r, in, &p, false))) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    if (rc == 0 && source_task_parse(&task, spec, im->where, im->out_abs) < 0)
        rc = refuse(im, "(spec)", "%s", rlvr_error_last());
    rlvr_task_free(task);
    if (rc == 0) rc = source_task_write(spec, im->out_abs, p.id);
    json_decref(spec);
    if (rc < 0 && wrote_hidden) {
        rlvr_fs_remove_tree(p.hidden_dir);
        rlvr_fs_remove_tree(repo_dir);
    }
    rlvr_str_list_clear(&p.hidden);
    rlvr_str_list_clear(&p.public_files);
    return rc;
}

static int import_line(importer *im, const char *line, size_t len) {
    json_error_t jerr;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    instance in = {0};
    int rc = o ? read_instance(im, o, &in) : refuse(im, "(line)", "not valid JSON: %s", jerr.text);
    swe_repo *r = rc == 0 ? repo_of(im, in.repo) : NULL;
    if (rc == 0 && !r)
        rc = refuse(im, "repo", "unknown repository \"%s\": the spec table %s has no entry for it (add \"%s\": {...})",
                    in.repo, im->o->specs, in.repo);
    if (rc == 0) rc = import_instance(im, &in, r);
    json_t *report = json_pack("{s:s, s:s?, s:s}", "line", im->where, "instance_id", in.instance_id, "outcome",
                               rc == 0 ? "imported" : "refused");
    if (report && rc < 0) json_object_set_new(report, "reason", json_string(rlvr_error_last()));
    if (im->o->progress) {
        if (rc == 0) fprintf(im->o->progress, "%s imported %s\n", im->where, in.instance_id);
        else fprintf(im->o->progress, "%s refused: %s\n", im->where, rlvr_error_last());
        fflush(im->o->progress);
    }
    source_report_line(im->report, report);
    rlvr_str_list_clear(&in.f2p);
    rlvr_str_list_clear(&in.p2p);
    json_decref(o);
    if (rc == 0) im->sum->imported++;
    else if (rc != RLVR_ENOMEM) im->sum->refused++;
    return rc == RLVR_ENOMEM ? rc : 0;
}

static int import_file(importer *im) {
    char *text = NULL;
    size_t len = 0;
    RLVR_TRY(rlvr_fs_read_file(im->o->jsonl, &text, &len));
    int rc = 0, line_no = 0;
    for (size_t pos = 0; rc == 0 && pos < len;) {
        char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        line_no++;
        size_t a = pos;
        while (a < end && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r')) a++;
        if (a < end) {
            snprintf(im->where, sizeof im->where, "%s:%d", im->o->jsonl, line_no);
            im->sum->read++;
            rc = import_line(im, text + pos, end - pos);
        }
        pos = end + 1;
    }
    free(text);
    return rc;
}

int rlvr_tasks_import_swe(const rlvr_swe_import_options *o, rlvr_sandbox_host *host, const char *out_dir,
                          rlvr_import_summary *out) {
    memset(out, 0, sizeof *out);
    if (!o || o->version != RLVR_SWE_IMPORT_OPTIONS_VERSION || !o->jsonl || !o->specs || !o->repos_dir)
        return RLVR_FAIL(RLVR_EINVAL, "swe-bench import: the instances, a spec table and a repositories directory "
                                      "are needed");
    if (o->check_base && !host) return RLVR_FAIL(RLVR_EINVAL, "swe-bench import: checking the base needs a host");
    double t0 = rlvr_now();
    importer im = {.o = o, .host = host, .out_dir = out_dir, .sum = out};
    int rc = source_pool_open(out_dir, im.out_abs, sizeof im.out_abs);
    if (rc == 0) rc = load_specs(&im);
    if (rc == 0) rc = source_report_open(&im.report, out_dir, "swe-bench-report.jsonl");
    if (rc == 0) rc = import_file(&im);
    if (im.report) fclose(im.report);
    free_repos(&im);
    out->wall_s = rlvr_now() - t0;
    return rc;
}
