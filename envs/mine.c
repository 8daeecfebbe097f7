/* envs/mine.c — `rlvr tasks mine`: tasks from a repository's history
 * (envs/sources.h).
 *
 * A commit that changes code and tests is a candidate: its parent is the
 * base commit, the code part of its diff the reference patch, its test files
 * as of the commit the hidden tests. The enclave then decides: the hidden
 * tests run over the untouched base and over the base with the reference,
 * several times each, and only a test that fails in every run before and
 * passes in every run after is FAIL_TO_PASS. What the policy sees is the
 * commit message and the repository as it was, scrubbed of its future. */
#include "envs/history.h"
#include "core/fs.h"
#include "envs/sources_internal.h"

#include "core/error.h"
#include "core/sys.h"
#include "enclave/fsutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *const outcome_names[RLVR_MINE_OUTCOME_COUNT] = {
    "kept",         "merge",        "tests_only",       "docs_only", "no_tests", "other_only", "binary",
    "build_broken", "fails_after",  "no_fail_to_pass", "flaky",     "timeout",  "infra",
};

const char *rlvr_mine_outcome_name(rlvr_mine_outcome o) {
    return o >= 0 && o < RLVR_MINE_OUTCOME_COUNT ? outcome_names[o] : "unknown";
}

bool rlvr_mine_outcome_precheck(rlvr_mine_outcome o) {
    return o == RLVR_MINE_MERGE || o == RLVR_MINE_TESTS_ONLY || o == RLVR_MINE_DOCS_ONLY || o == RLVR_MINE_NO_TESTS ||
           o == RLVR_MINE_OTHER_ONLY;
}

typedef struct {
    json_t *spec; /* the final spec but its split */
    char id[96];
    int64_t time;
} kept_task;

typedef struct {
    const rlvr_mine_options *o;
    const rlvr_repo_facts *facts;
    rlvr_sandbox_host *host;
    const char *out_dir;
    char out_abs[4096]; /* out_dir made absolute: the provisional specs name it */
    git_repository *repo;
    char repo_path[4096]; /* what the provisional specs name */
    char name[48];
    FILE *report;
    kept_task *kept;
    size_t n_kept, cap_kept;
    rlvr_mine_summary *sum;
} miner;

/* What one commit's change is made of. */
typedef struct {
    rlvr_str_list code;   /* code paths, any change */
    rlvr_str_list tests;  /* test files the commit leaves (added or changed) */
    bool test_deleted, doc, other, code_binary;
} change_parts;

static void change_parts_free(change_parts *p) {
    rlvr_str_list_clear(&p->code);
    rlvr_str_list_clear(&p->tests);
}

static int split_change(const miner *m, const rlvr_history_changes *ch, change_parts *out) {
    for (size_t i = 0; i < ch->n; i++) {
        const rlvr_history_change *c = &ch->items[i];
        switch (rlvr_repo_facts_classify(m->facts, c->path)) {
        case 't':
            if (c->status == 'D') out->test_deleted = true;
            else RLVR_TRY(rlvr_str_list_add_unique(&out->tests, c->path));
            break;
        case 'c':
            RLVR_TRY(rlvr_str_list_add_unique(&out->code, c->path));
            out->code_binary |= c->binary;
            break;
        case 'd': out->doc = true; break;
        default: out->other = true;
        }
    }
    return 0;
}

static rlvr_mine_outcome precheck(const change_parts *p) {
    if (p->code.n && p->tests.n) return p->code_binary ? RLVR_MINE_BINARY : RLVR_MINE_KEPT;
    if (p->code.n) return RLVR_MINE_NO_TESTS;
    if (p->tests.n || p->test_deleted) return RLVR_MINE_TESTS_ONLY;
    return p->doc && !p->other ? RLVR_MINE_DOCS_ONLY : RLVR_MINE_OTHER_ONLY;
}

/* ---- one candidate ---------------------------------------------------------------- */

typedef struct {
    char id[96];
    char base_hex[41], fix_hex[41];
    char *message, *reference;
    rlvr_str_list public_files;
    char hidden_dir[4400], hidden_rel[256];
    rlvr_str_list inputs;   /* the hidden files: the changed test files, less the expected ones */
    rlvr_str_list expected; /* with expected results: every such file of the fix's tree */
    char expected_dir[4400], expected_rel[256];
    observation obs;
    rlvr_str_list f2p, p2p, unstable, failing_after;
} candidate;

static void candidate_free(candidate *c) {
    free(c->message);
    free(c->reference);
    rlvr_str_list_clear(&c->public_files);
    rlvr_str_list_clear(&c->inputs);
    rlvr_str_list_clear(&c->expected);
    observation_free(&c->obs);
    rlvr_str_list_clear(&c->f2p);
    rlvr_str_list_clear(&c->p2p);
    rlvr_str_list_clear(&c->unstable);
    rlvr_str_list_clear(&c->failing_after);
}

/* A public test file: a test the run does not rewrite. */
static bool is_test_path(const char *path, void *facts) {
    return rlvr_repo_facts_classify(facts, path) == 't' && !rlvr_repo_facts_expected(facts, path);
}

static bool is_expected_path(const char *path, void *facts) { return rlvr_repo_facts_expected(facts, path); }

static char *prompt_of(const char *message) {
    static const char tail[] =
        "\n\nMake this change in the repository's code. Tests that check it exist but are not in the repository: "
        "your change is judged by them and by the tests already there (run_public_tests runs those).";
    size_t n = strlen(message) + sizeof tail;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", message, tail);
    return p;
}

/* Sorts every observed test into the lists; returns the outcome. */
static rlvr_mine_outcome classify_tests(candidate *c) {
    const observation *o = &c->obs;
    if (o->infra) return RLVR_MINE_INFRA;
    if (o->limit) return RLVR_MINE_TIMEOUT;
    if (o->unreadable[SIDE_AFTER]) return RLVR_MINE_BUILD_BROKEN;
    int nb = o->runs[SIDE_BEFORE], na = o->runs[SIDE_AFTER];
    size_t passing_after = 0;
    bool flips_into_f2p = false;
    for (size_t i = 0; i < o->n; i++) {
        const observed_test *t = &o->tests[i];
        bool pass_after = t->pass[SIDE_AFTER] == na, fail_before = t->fail[SIDE_BEFORE] == nb;
        bool stable_after = pass_after || t->fail[SIDE_AFTER] == na || t->skip[SIDE_AFTER] == na;
        bool stable_before = t->pass[SIDE_BEFORE] == nb || fail_before || t->skip[SIDE_BEFORE] == nb ||
                             t->pass[SIDE_BEFORE] + t->fail[SIDE_BEFORE] + t->skip[SIDE_BEFORE] == 0;
        int rc = 0;
        passing_after += pass_after;
        if (!stable_after || !stable_before) {
            rc = rlvr_str_list_add_unique(&c->unstable, t->name);
            flips_into_f2p |= t->pass[SIDE_AFTER] > 0 && t->fail[SIDE_BEFORE] > 0;
        } else if (t->fail[SIDE_AFTER] == na)
            rc = rlvr_str_list_add_unique(&c->failing_after, t->name);
        else if (pass_after && fail_before)
            rc = rlvr_str_list_add_unique(&c->f2p, t->name);
        else if (pass_after && t->pass[SIDE_BEFORE] == nb)
            rc = rlvr_str_list_add_unique(&c->p2p, t->name);
        if (rc < 0) return RLVR_MINE_INFRA;
    }
    if (passing_after == 0) return RLVR_MINE_BUILD_BROKEN;
    if (c->failing_after.n) return RLVR_MINE_FAILS_AFTER;
    if (c->f2p.n == 0) return flips_into_f2p ? RLVR_MINE_FLAKY : RLVR_MINE_NO_FAIL_TO_PASS;
    return RLVR_MINE_KEPT;
}

static int provisional_task(rlvr_task **out, const miner *m, candidate *c) {
    source_task st = {.id = c->id, .family = "mined", .split_key = m->name, .prompt = "-", .split = RLVR_SPLIT_TRAIN,
                      .repository = m->repo_path, .base_commit = c->base_hex, .hidden_root = c->hidden_dir,
                      .hidden_files = &c->inputs, .public_files = &c->public_files, .reference_patch = c->reference,
                      .expected_root = c->expected.n ? c->expected_dir : NULL, .expected_files = &c->expected};
    json_t *spec = source_task_json(&st, m->facts);
    if (!spec) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    int rc = source_task_parse(out, spec, c->id, "/");
    json_decref(spec);
    return rc;
}

static int run_candidate(miner *m, candidate *c) {
    rlvr_task *task = NULL;
    rlvr_verify_task *vt = NULL;
    int rc = provisional_task(&task, m, c);
    if (rc == 0) rc = source_verify_task_new(&vt, m->host, task, m->facts->wall_s, true);
    if (rc == RLVR_ESANDBOX) {
        c->obs.infra = true;
        snprintf(c->obs.detail, sizeof c->obs.detail, "%.255s", rlvr_error_last());
        rc = 0;
    } else {
        uint64_t seed = m->o->seed + (uint64_t)m->sum->examined * 64; /* per commit */
        if (rc == 0) rc = observe(vt, "", SIDE_BEFORE, m->o->runs, seed, &c->obs);
        if (rc == 0) rc = observe(vt, c->reference, SIDE_AFTER, m->o->runs, seed + 32, &c->obs);
    }
    rlvr_verify_task_free(vt);
    rlvr_task_free(task);
    return rc;
}

static json_t *metadata_of(const miner *m, const candidate *c, const git_commit *commit) {
    json_t *unstable = json_array();
    for (size_t i = 0; unstable && i < c->unstable.n; i++) json_array_append_new(unstable, json_string(c->unstable.items[i]));
    const git_signature *a = git_commit_author(commit);
    return json_pack("{s:s, s:s, s:s, s:s, s:s?, s:o}", "source", "mined", "repository", m->name, "fix_commit",
                     c->fix_hex, "base_commit", c->base_hex, "author", a && a->name ? a->name : NULL, "unstable",
                     unstable ? unstable : json_array());
}

static int keep(miner *m, candidate *c, const git_commit *commit) {
    char repo_rel[256], repo_dir[4096];
    snprintf(repo_rel, sizeof repo_rel, "repos/%s.git", c->id);
    snprintf(repo_dir, sizeof repo_dir, "%s/%s", m->out_dir, repo_rel);
    RLVR_TRY(rlvr_history_write_scrubbed(m->repo, git_commit_parent_id(commit, 0), repo_dir));
    char *prompt = prompt_of(c->message);
    json_t *meta = metadata_of(m, c, commit);
    source_task st = {.id = c->id, .family = "mined", .split_key = m->name, .prompt = prompt,
                      .split = RLVR_SPLIT_TRAIN, .repository = repo_rel, .base_commit = c->base_hex,
                      .hidden_root = c->hidden_rel, .hidden_files = &c->inputs, .public_files = &c->public_files,
                      .expected_root = c->expected.n ? c->expected_rel : NULL, .expected_files = &c->expected,
                      .fail_to_pass = &c->f2p, .pass_to_pass = &c->p2p, .reference_patch = c->reference,
                      .created_at = (int64_t)git_commit_time(commit), .has_created_at = true, .metadata = meta};
    json_t *spec = prompt && meta ? source_task_json(&st, m->facts) : NULL;
    json_decref(meta);
    free(prompt);
    if (!spec) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    rlvr_task *check = NULL;
    int rc = source_task_parse(&check, spec, c->id, m->out_dir); /* what the pool will load */
    rlvr_task_free(check);
    if (rc == 0 && m->n_kept == m->cap_kept) {
        size_t cap = m->cap_kept ? m->cap_kept * 2 : 16;
        kept_task *grown = realloc(m->kept, cap * sizeof *grown);
        if (!grown) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        else m->kept = grown, m->cap_kept = cap;
    }
    if (rc < 0) {
        json_decref(spec);
        return rc;
    }
    kept_task *k = &m->kept[m->n_kept++];
    k->spec = spec;
    snprintf(k->id, sizeof k->id, "%s", c->id);
    k->time = (int64_t)git_commit_time(commit);
    return 0;
}

static int prepare_candidate(miner *m, candidate *c, const git_commit *parent, const git_commit *commit,
                             const change_parts *parts) {
    git_oid_tostr(c->base_hex, sizeof c->base_hex, git_commit_id(parent));
    git_oid_tostr(c->fix_hex, sizeof c->fix_hex, git_commit_id(commit));
    snprintf(c->id, sizeof c->id, "%s-%.12s", m->name, c->fix_hex);
    snprintf(c->hidden_rel, sizeof c->hidden_rel, "hidden/%s", c->id);
    snprintf(c->hidden_dir, sizeof c->hidden_dir, "%s/%s", m->out_abs, c->hidden_rel);
    snprintf(c->expected_rel, sizeof c->expected_rel, "expected/%s", c->id);
    snprintf(c->expected_dir, sizeof c->expected_dir, "%s/%s", m->out_abs, c->expected_rel);
    struct stat st;
    if (lstat(c->hidden_dir, &st) == 0 || lstat(c->expected_dir, &st) == 0)
        return rlvr_error_set(RLVR_EIO, "%s exists already: mine into a new directory", c->hidden_dir);
    for (size_t i = 0; i < parts->tests.n; i++)
        if (!rlvr_repo_facts_expected(m->facts, parts->tests.items[i]))
            RLVR_TRY(rlvr_str_list_add_unique(&c->inputs, parts->tests.items[i]));
    git_tree *before = NULL, *after = NULL;
    int rc = git_commit_tree(&before, parent) < 0 || git_commit_tree(&after, commit) < 0
                 ? rlvr_error_set(RLVR_EGIT, "reading the trees of commit %s", c->fix_hex)
                 : 0;
    if (rc == 0) rc = rlvr_history_diff(m->repo, before, after, parts->code.items, parts->code.n, &c->reference);
    if (rc == 0) rc = rlvr_history_message(commit, &c->message);
    if (rc == 0) rc = rlvr_history_tree_paths(m->repo, before, is_test_path, (void *)m->facts, &c->public_files);
    if (rc == 0) rc = rlvr_mkdir_p(c->hidden_dir, 0755);
    if (rc == 0) rc = rlvr_history_write_files(m->repo, after, c->inputs.items, c->inputs.n, c->hidden_dir);
    /* expected results: every expected file of the fix's tree, kept apart */
    if (rc == 0 && m->facts->expected.n)
        rc = rlvr_history_tree_paths(m->repo, after, is_expected_path, (void *)m->facts, &c->expected);
    if (rc == 0 && c->expected.n) rc = rlvr_mkdir_p(c->expected_dir, 0755);
    if (rc == 0) rc = rlvr_history_write_files(m->repo, after, c->expected.items, c->expected.n, c->expected_dir);
    git_tree_free(before);
    git_tree_free(after);
    return rc;
}

/* ---- one commit ------------------------------------------------------------------- */

static void progress(const miner *m, const git_commit *commit, rlvr_mine_outcome out, const candidate *c,
                     double wall_s) {
    if (!m->o->progress) return;
    char hex[13], when[21];
    git_oid_tostr(hex, sizeof hex, git_commit_id(commit));
    rlvr_task_time_format((int64_t)git_commit_time(commit), when);
    const char *summary = git_commit_summary((git_commit *)commit);
    fprintf(m->o->progress, "[%lld] %s %.10s %-15s", (long long)m->sum->examined, hex, when, rlvr_mine_outcome_name(out));
    if (c && out == RLVR_MINE_KEPT)
        fprintf(m->o->progress, " %zu FAIL_TO_PASS, %zu PASS_TO_PASS", c->f2p.n, c->p2p.n);
    else if (c && c->obs.detail[0] && (out == RLVR_MINE_INFRA || out == RLVR_MINE_TIMEOUT || out == RLVR_MINE_BUILD_BROKEN))
        fprintf(m->o->progress, " (%s)", c->obs.detail);
    if (c) fprintf(m->o->progress, " %.1f s", wall_s);
    fprintf(m->o->progress, "  %.60s\n", summary ? summary : "");
    fflush(m->o->progress);
}

static void report(const miner *m, const git_commit *commit, rlvr_mine_outcome out, const candidate *c) {
    char hex[41], when[21];
    git_oid_tostr(hex, sizeof hex, git_commit_id(commit));
    rlvr_task_time_format((int64_t)git_commit_time(commit), when);
    const char *summary = git_commit_summary((git_commit *)commit);
    json_t *line = json_pack("{s:s, s:s, s:s, s:s}", "commit", hex, "time", when, "subject", summary ? summary : "",
                             "outcome", rlvr_mine_outcome_name(out));
    if (line && c) {
        if (out == RLVR_MINE_KEPT) json_object_set_new(line, "id", json_string(c->id));
        json_object_set_new(line, "fail_to_pass", json_integer((json_int_t)c->f2p.n));
        json_object_set_new(line, "pass_to_pass", json_integer((json_int_t)c->p2p.n));
        json_object_set_new(line, "unstable", json_integer((json_int_t)c->unstable.n));
        json_object_set_new(line, "failing_after", json_integer((json_int_t)c->failing_after.n));
        if (c->obs.detail[0]) json_object_set_new(line, "detail", json_string(c->obs.detail));
    }
    source_report_line(m->report, line);
}

static int mine_candidate(miner *m, const git_commit *parent, const git_commit *commit, const change_parts *parts,
                          rlvr_mine_outcome *out) {
    double t0 = rlvr_now();
    candidate c = {0};
    int rc = prepare_candidate(m, &c, parent, commit, parts);
    if (rc == 0) rc = run_candidate(m, &c);
    if (rc == 0) *out = classify_tests(&c);
    if (rc == 0 && *out == RLVR_MINE_KEPT) rc = keep(m, &c, commit);
    if ((rc < 0 || *out != RLVR_MINE_KEPT) && c.hidden_dir[0]) {
        rlvr_fs_remove_tree(c.hidden_dir);
        rlvr_fs_remove_tree(c.expected_dir);
    }
    if (rc == 0) {
        progress(m, commit, *out, &c, rlvr_now() - t0);
        report(m, commit, *out, &c);
    }
    candidate_free(&c);
    return rc;
}

static int mine_commit(miner *m, const git_commit *commit) {
    rlvr_mine_outcome out = RLVR_MINE_MERGE;
    git_commit *parent = NULL;
    rlvr_history_changes ch = {0};
    change_parts parts = {0};
    int rc = 0;
    if (git_commit_parentcount(commit) == 1) {
        if (git_commit_parent(&parent, commit, 0) < 0) return rlvr_error_set(RLVR_EGIT, "reading a parent commit");
        rc = rlvr_history_changes_of(m->repo, parent, commit, &ch);
        if (rc == 0) rc = split_change(m, &ch, &parts);
        if (rc == 0) out = precheck(&parts);
    }
    if (rc == 0 && rlvr_mine_outcome_precheck(out)) {
        progress(m, commit, out, NULL, 0);
        report(m, commit, out, NULL);
    } else if (rc == 0) {
        m->sum->candidates++;
        if (out == RLVR_MINE_KEPT) rc = mine_candidate(m, parent, commit, &parts, &out);
        else {
            progress(m, commit, out, NULL, 0);
            report(m, commit, out, NULL);
        }
    }
    if (rc == 0) m->sum->counts[out]++;
    change_parts_free(&parts);
    rlvr_history_changes_free(&ch);
    git_commit_free(parent);
    return rc;
}

/* ---- the split and the specs --------------------------------------------------------- */

static int by_time(const void *a, const void *b) {
    const kept_task *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The newest share goes to eval; ties at the boundary go with it, so every
 * train task is strictly older than every eval task. */
static int write_specs(miner *m) {
    size_t n = m->n_kept;
    qsort(m->kept, n, sizeof *m->kept, by_time);
    size_t n_eval = (size_t)floor(m->o->eval_share * (double)n + 0.5);
    if (m->o->eval_share > 0 && n >= 2 && n_eval == 0) n_eval = 1;
    if (n_eval > n) n_eval = n;
    size_t b = n - n_eval;
    while (b > 0 && b < n && m->kept[b - 1].time == m->kept[b].time) b--;
    for (size_t i = 0; i < n; i++) {
        rlvr_split split = i < b ? RLVR_SPLIT_TRAIN : RLVR_SPLIT_EVAL;
        json_object_set_new(m->kept[i].spec, "split", json_string(rlvr_split_name(split)));
        RLVR_TRY(source_task_write(m->kept[i].spec, m->out_dir, m->kept[i].id));
        if (split == RLVR_SPLIT_TRAIN) m->sum->train++;
        else m->sum->eval++;
    }
    m->sum->boundary = b < n ? m->kept[b].time : 0;
    return 0;
}

/* ---- the walk ------------------------------------------------------------------------- */

static int walk(miner *m) {
    git_revwalk *w = NULL;
    git_object *start = NULL;
    const char *rev = m->o->rev ? m->o->rev : "HEAD";
    int g = git_revparse_single(&start, m->repo, rev);
    if (g == 0) g = git_revwalk_new(&w, m->repo);
    if (g == 0) git_revwalk_sorting(w, GIT_SORT_TIME);
    if (g == 0) g = git_revwalk_push(w, git_object_id(start));
    git_object_free(start);
    int rc = g < 0 ? rlvr_error_set(RLVR_EGIT, "repository %s: cannot walk from \"%s\": %s", m->o->repo, rev,
                                    git_error_last() ? git_error_last()->message : "failed")
                   : 0;
    git_oid id;
    while (rc == 0 && (m->o->max_tasks == 0 || (int)m->n_kept < m->o->max_tasks) && git_revwalk_next(&id, w) == 0) {
        git_commit *c = NULL;
        if (git_commit_lookup(&c, m->repo, &id) < 0) {
            rc = rlvr_error_set(RLVR_EGIT, "repository %s: reading a commit", m->o->repo);
            break;
        }
        int64_t t = (int64_t)git_commit_time(c);
        if ((!m->o->until || t <= m->o->until) && (!m->o->since || t >= m->o->since)) {
            m->sum->examined++;
            rc = mine_commit(m, c);
        }
        git_commit_free(c);
    }
    git_revwalk_free(w);
    return rc;
}

static int check_options(const rlvr_mine_options *o) {
    if (!o || o->version != RLVR_MINE_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "mine options: version %u, this rlvr knows %d", o ? o->version : 0,
                         RLVR_MINE_OPTIONS_VERSION);
    if (!o->repo || !o->facts) return RLVR_FAIL(RLVR_EINVAL, "mine: a repository and its facts are needed");
    if (o->facts->tests.n == 0)
        return rlvr_error_set(RLVR_EINVAL, "mine: the facts name no test paths (\"tests\": [\"tests/\"]; --tests GLOB)");
    if (o->runs < 2) return rlvr_error_set(RLVR_EINVAL, "mine: at least 2 runs on each side are needed to see flips");
    if (!(o->eval_share >= 0 && o->eval_share <= 1))
        return rlvr_error_set(RLVR_EINVAL, "mine: the eval share must lie in [0, 1]");
    return 0;
}

static void default_name(char *out, size_t cap, const char *repo) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", repo);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    if (n > 5 && strcmp(buf + n - 5, "/.git") == 0) buf[n -= 5] = '\0';
    const char *base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
    char clean[256];
    snprintf(clean, sizeof clean, "%s", base);
    char *dot = strstr(clean, ".bundle");
    if (!dot) dot = strstr(clean, ".git");
    if (dot && dot != clean) *dot = '\0';
    source_clean_name(out, cap, clean);
}

int rlvr_tasks_mine(const rlvr_mine_options *o, rlvr_sandbox_host *host, const char *out_dir,
                    rlvr_mine_summary *out) {
    memset(out, 0, sizeof *out);
    RLVR_TRY(check_options(o));
    if (!host) return RLVR_FAIL(RLVR_EINVAL, "mine: a sandbox host is needed");
    double t0 = rlvr_now();
    miner m = {.o = o, .facts = o->facts, .host = host, .out_dir = out_dir, .sum = out};
    if (o->name) source_clean_name(m.name, sizeof m.name, o->name);
    else default_name(m.name, sizeof m.name, o->repo);
    char *unbundled = NULL;
    int rc = source_pool_open(out_dir, m.out_abs, sizeof m.out_abs);
    if (rc == 0) rc = rlvr_history_open(&m.repo, o->repo, m.out_abs, &unbundled);
    if (rc == 0) rlvr_history_path(m.repo, m.repo_path, sizeof m.repo_path);
    if (rc == 0) rc = source_report_open(&m.report, out_dir, "mine-report.jsonl");
    if (rc == 0) rc = walk(&m);
    if (rc == 0) rc = write_specs(&m);
    for (size_t i = 0; i < m.n_kept; i++) json_decref(m.kept[i].spec);
    free(m.kept);
    if (m.report) fclose(m.report);
    git_repository_free(m.repo);
    if (unbundled) rlvr_fs_remove_tree(unbundled);
    free(unbundled);
    out->wall_s = rlvr_now() - t0;
    return rc;
}
