/* envs/harness.c — the turn loop and the driver that runs many rollouts on
 * one batched sampler (envs/harness.h). */
#include "envs/harness.h"

#include "core/error.h"
#include "core/sys.h"
#include "enclave/config.h"
#include "enclave/reason.h"
#include "enclave/workspace.h"
#include "envs/arith.h"
#include "envs/config.h"
#include "envs/harness_internal.h"
#include "envs/tools.h"
#include "envs/turn.h"
#include "rl/config.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void rlvr_harness_options_default(rlvr_harness_options *o) {
    memset(o, 0, sizeof *o);
    o->version = RLVR_HARNESS_OPTIONS_VERSION;
    /* [harness] and [repetition] at their tables' defaults (they parse: test_config_tables) */
    rlvr_harness_config h = {0};
    (void)rlvr_harness_config_read(NULL, &h);
    o->budgets = h.budgets;
    o->tool_output_bytes = h.tool_output_bytes;
    o->tool_prompt = h.tool_prompt;
    o->overlap_tools = true;
    (void)rlvr_config_fill_defaults(rlvr_rl_config_keys, "repetition", &o->repetition);
}

int rlvr_harness_options_from_config(rlvr_harness_options *out, const rlvr_config *cfg) {
    rlvr_harness_options_default(out);
    rlvr_harness_config h;
    RLVR_TRY(rlvr_harness_config_read(cfg, &h));
    out->budgets = h.budgets;
    out->tool_output_bytes = h.tool_output_bytes;
    out->tool_prompt = h.tool_prompt;
    RLVR_TRY(rlvr_rl_repetition_config_load(&out->repetition, cfg));
    return rlvr_sandbox_limits_from_config(cfg, &out->tool_limits);
}

void rlvr_harness_job_clear(rlvr_harness_job *job) {
    rlvr_rollout_free(&job->record);
    free(job->patch);
    job->patch = NULL;
    job->patch_len = 0;
    job->calls = job->calls_parsed = 0;
    job->public_tests_changed = false;
    job->patch_reason = 0;
    job->prompt_shared = false;
    rlvr_harness_job_clear_capture(job);
    job->snapshot_s = 0;
    job->prefix_policy_tokens = 0;
}

void rlvr_harness_job_clear_capture(rlvr_harness_job *job) {
    for (int32_t i = 0; i < job->n_states; i++) rlvr_workspace_state_free(job->states[i]);
    free(job->states);
    free(job->turn_state);
    free(job->turn_changed);
    job->states = NULL;
    job->turn_state = NULL;
    job->turn_changed = NULL;
    job->n_states = 0;
    job->cap_turn_states = 0;
}

/* ---- the prompt -------------------------------------------------------------------- */

static int add_text(char **s, size_t *n, size_t *cap, const char *text) {
    size_t len = strlen(text);
    if (*n + len + 1 > *cap) {
        size_t c = (*cap ? *cap : 1024);
        while (c < *n + len + 1) c *= 2;
        char *p = realloc(*s, c);
        if (!p) return RLVR_FAIL(RLVR_ENOMEM, "out of memory rendering a prompt");
        *s = p;
        *cap = c;
    }
    memcpy(*s + *n, text, len + 1);
    *n += len;
    return 0;
}

/* The system turn: how to call a tool, and each tool with its schema. */
/* "path, start?, end?": the schema's properties, optional ones marked. */
static void compact_args(rlvr_tool_id t, char *out, size_t cap) {
    out[0] = 0;
    json_t *schema = json_loads(rlvr_tool_schema_json(t), 0, NULL);
    json_t *props = json_object_get(schema, "properties"), *req = json_object_get(schema, "required");
    const char *key;
    json_t *v;
    size_t n = 0;
    json_object_foreach(props, key, v) {
        bool required = false;
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) required |= json_is_string(r) && strcmp(json_string_value(r), key) == 0;
        int w = snprintf(out + n, cap - n, "%s%s%s", n ? ", " : "", key, required ? "" : "?");
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
    json_decref(schema);
}

/* The system turn: how to call tools, then one line per allowed tool, with
 * its JSON schema (RLVR_TOOL_PROMPT_SCHEMA) or just its argument names
 * (RLVR_TOOL_PROMPT_COMPACT: a much shorter prompt for small models; calls
 * are validated against the full schema either way). */
static int system_text(uint32_t tools, rlvr_tool_prompt style, const rlvr_tokenizer *tok, char **out, size_t *len) {
    char *s = NULL;
    size_t n = 0, cap = 0;
    const char *open, *close; /* the markers of the tokenizer's chat format */
    rlvr_template_call_markers(tok, &open, &close);
    char head[512];
    if (style == RLVR_TOOL_PROMPT_COMPACT)
        snprintf(head, sizeof head,
                 "Call one tool per turn: %s{\"name\": TOOL, \"arguments\": {...}}%s. No call, or submit, ends the "
                 "episode.\nTools:\n",
                 open, close);
    else
        snprintf(head, sizeof head,
                 "You work in a repository through tools. Call one tool per turn by writing %s{\"name\": TOOL, "
                 "\"arguments\": {...}}%s at the end of the turn. A turn without a tool call ends the episode; so "
                 "does submit.\nTools:\n",
                 open, close);
    int rc = add_text(&s, &n, &cap, head);
    for (int t = 0; rc == 0 && t < RLVR_TOOL_COUNT; t++) {
        if (!(tools & (1u << t))) continue;
        char line[1024], args[256];
        if (style == RLVR_TOOL_PROMPT_COMPACT) {
            compact_args((rlvr_tool_id)t, args, sizeof args);
            snprintf(line, sizeof line, "- %s(%s)\n", rlvr_tool_name((rlvr_tool_id)t), args);
        } else {
            snprintf(line, sizeof line, "- %s: %s Arguments: %s\n", rlvr_tool_name((rlvr_tool_id)t),
                     rlvr_tool_description((rlvr_tool_id)t), rlvr_tool_schema_json((rlvr_tool_id)t));
        }
        rc = add_text(&s, &n, &cap, line);
    }
    if (rc < 0) {
        free(s);
        return rc;
    }
    *out = s;
    *len = n;
    return 0;
}

int rlvr_harness_render_prompt(rlvr_token_buf *out, const rlvr_tokenizer *tok, const rlvr_task *task,
                               const rlvr_harness_options *opt) {
    RLVR_TRY(rlvr_template_begin(out, tok));
    if (task->tools) {
        char *sys;
        size_t len;
        RLVR_TRY(system_text(task->tools, opt ? opt->tool_prompt : RLVR_TOOL_PROMPT_SCHEMA, tok, &sys, &len));
        int rc = rlvr_template_message(out, tok, RLVR_ROLE_SYSTEM, sys, len);
        free(sys);
        RLVR_TRY(rc);
    }
    RLVR_TRY(rlvr_template_message(out, tok, RLVR_ROLE_USER, task->prompt, strlen(task->prompt)));
    return rlvr_template_assistant_start(out, tok);
}

/* ---- one environment ------------------------------------------------------------------ */

typedef struct {
    rlvr_harness_job *job;
    int slot;
    bool active;
    rlvr_workspace *ws;
    rlvr_task_budgets b;
    int32_t context_cap;  /* min(budget, sampler context) */
    int32_t turn_start;   /* record index of the current policy turn's first token */
    int32_t shared_len;   /* tokens loaded into the slot at the start: the prompt, or a fork's prefix */
    int32_t cur_state;    /* capture: the workspace's state now (index into job->states, or
                             RLVR_HARNESS_STATE_PRISTINE / _UNKNOWN) */
    bool turn_changed;    /* capture: the current turn's tool changed the workspace */
    int64_t policy_used;
    int64_t malformed_run; /* malformed calls in a row so far (a well-formed call resets it) */
    rlvr_repetition *rep;
    struct driver *d;
    /* the turn being finished, and its tool call while it runs */
    rlvr_turn turn;
    rlvr_tool_call call;
    bool malformed;    /* no tool: the observation is `err` (routed like a tool for simulated latency) */
    rlvr_tool_error err;
    double latency_s;  /* simulated latency of this turn (options.simulated_latency) */
    harness_tool_outcome out;
    int tool_rc;
    char tool_msg[512];
    bool waiting;          /* the tool runs (tool.run), or its observation waits for ready_at */
    harness_tool_run tool; /* the tool's sandbox run while it runs; tool.run NULL otherwise */
    double ready_at;       /* rlvr_now() time the observation is due (simulated latency) */
    int poll_first, poll_n; /* the run's entries in the driver's poll set */
} env;

typedef struct driver {
    rlvr_sampler *s;
    const rlvr_tokenizer *tok;
    const rlvr_harness_options *opt;
    rlvr_token_buf scratch;
    bool overlap; /* tools overlap decoding (the event loop); false: each one blocks */
    struct pollfd *fds; /* (3·slots) the poll set of the running tools */
} driver;

static void emit(driver *d, env *e, rlvr_harness_event ev, const rlvr_turn *turn) {
    if (d->opt->on_event) d->opt->on_event(d->opt->event_arg, ev, e->job, turn);
}

/* The capture outputs of the turn just recorded: the state after it. The
 * arrays grow with the record's turn array (doubling), not every turn. */
static int note_turn_state(env *e) {
    rlvr_harness_job *job = e->job;
    int32_t n = job->record.n_turns, cap = job->record.cap_turns;
    if (cap > job->cap_turn_states) {
        int32_t *ts = realloc(job->turn_state, (size_t)cap * sizeof *ts);
        if (ts) job->turn_state = ts;
        uint8_t *tc = ts ? realloc(job->turn_changed, (size_t)cap) : NULL;
        if (!ts || !tc) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for workspace states");
        job->turn_changed = tc;
        job->cap_turn_states = cap;
    }
    job->turn_state[n - 1] = e->cur_state;
    job->turn_changed[n - 1] = e->turn_changed;
    e->turn_changed = false;
    return 0;
}

/* After a captured tool: a snapshot of the workspace, kept when it differs
 * from the state before the call (the call changed the workspace). A
 * snapshot that fails or is too large makes the state unknown until the next
 * one (each snapshot holds every change since the pristine tree), and costs
 * the rollout nothing else. */
static int capture_state(env *e) {
    rlvr_harness_job *job = e->job;
    double t0 = rlvr_now();
    rlvr_workspace_state *st = NULL;
    int rc = rlvr_workspace_snapshot(e->ws, &st);
    job->snapshot_s += rlvr_now() - t0;
    if (rc == RLVR_ENOMEM) return rc;
    if (rc < 0) {
        e->turn_changed = e->cur_state != RLVR_HARNESS_STATE_UNKNOWN;
        e->cur_state = RLVR_HARNESS_STATE_UNKNOWN;
        return 0;
    }
    bool same = e->cur_state == RLVR_HARNESS_STATE_PRISTINE ? rlvr_workspace_state_empty(st)
                : e->cur_state >= 0 && rlvr_workspace_state_equal(st, job->states[e->cur_state]);
    if (same) {
        rlvr_workspace_state_free(st);
        return 0;
    }
    rlvr_workspace_state **v = realloc(job->states, (size_t)(job->n_states + 1) * sizeof *v);
    if (!v) {
        rlvr_workspace_state_free(st);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory for workspace states");
    }
    job->states = v;
    job->states[job->n_states] = st;
    e->cur_state = job->n_states++;
    e->turn_changed = true;
    return 0;
}

/* Appends a finished turn to the record and reports it. */
static int record_turn(driver *d, env *e, const rlvr_turn *turn) {
    rlvr_rollout *r = &e->job->record;
    RLVR_TRY(rlvr_rollout_push_turn(r, turn, NULL));
    if (e->job->capture_tools) RLVR_TRY(note_turn_state(e));
    emit(d, e, RLVR_HARNESS_EVENT_TURN, &r->turns[r->n_turns - 1]);
    return 0;
}

/* Readonly paths of the workspace: the public tests and every protected
 * glob that names one plain path ("/Makefile", "/tests"). */
static const char **readonly_paths(const rlvr_task *t) {
    const char **v = calloc(t->public_test_files.n + t->protected_paths.n + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < t->public_test_files.n; i++) v[k++] = t->public_test_files.items[i];
    for (size_t i = 0; v && i < t->protected_paths.n; i++) {
        const char *g = t->protected_paths.items[i];
        if (g[0] == '/' && g[1] && !strpbrk(g, "*?[")) v[k++] = g + 1;
    }
    return v;
}

static const char **list_view(const rlvr_str_list *l) {
    const char **v = calloc(l->n + 1, sizeof *v);
    for (size_t i = 0; v && i < l->n; i++) v[i] = l->items[i];
    return v;
}

static int workspace_open(env *e, const rlvr_harness_options *opt) {
    const rlvr_task *t = e->job->task;
    if (!opt->host) return RLVR_FAIL(RLVR_EINVAL, "task %s: a \"tests\" task needs a sandbox host", t->id);
    if (t->repository_kind != RLVR_REPO_DIRECTORY)
        return RLVR_FAIL(RLVR_EUNSUPPORTED, "task %s: the workspace takes a repository directory, not a bundle", t->id);
    const char **pub = calloc(t->public_test_files.n + 1, sizeof *pub);
    const char **ro = readonly_paths(t);
    const char **env_view = list_view(&t->environment_env);
    int rc = 0;
    if (!pub || !ro || !env_view) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < t->public_test_files.n; i++) pub[i] = t->public_test_files.items[i];
    if (rc == 0) {
        rlvr_workspace_spec spec = {.version = RLVR_WORKSPACE_SPEC_VERSION, .repo_dir = t->repository_path,
                                    .base_commit = t->base_commit, .public_tests = pub, .readonly = ro,
                                    .limits = opt->tool_limits,
                                    .network = t->network ? RLVR_SANDBOX_NET_LOOPBACK : RLVR_SANDBOX_NET_NONE,
                                    .environment = t->environment_path, .workdir = t->environment_workdir,
                                    .env = env_view};
        if (spec.limits.wall_s <= 0) rlvr_sandbox_limits_default(&spec.limits);
        if (spec.limits.wall_s < e->b.tool_timeout_s) spec.limits.wall_s = e->b.tool_timeout_s;
        if (spec.limits.cpu_s < e->b.tool_timeout_s) spec.limits.cpu_s = e->b.tool_timeout_s;
        rc = rlvr_workspace_new(&e->ws, opt->host, &spec);
    }
    free(pub);
    free(ro);
    free(env_view);
    return rc;
}

static int push_buf(rlvr_rollout *r, const rlvr_token_buf *b, uint8_t mask) {
    for (int32_t i = 0; i < b->n; i++) RLVR_TRY(rlvr_rollout_push_token(r, b->ids[i], 0.0f, 0.0f, mask));
    return 0;
}

/* The turn limit of the next policy turn; false when no token fits. */
static bool begin_turn(driver *d, env *e) {
    rlvr_rollout *r = &e->job->record;
    e->turn_start = r->n_tokens;
    int64_t left = e->b.policy_tokens - e->policy_used;
    int64_t room = (int64_t)e->context_cap - r->n_tokens;
    if (left <= 0) {
        r->stop = RLVR_STOP_MAX_TOKENS;
        return false;
    }
    if (room <= 0) {
        r->stop = RLVR_STOP_CONTEXT;
        return false;
    }
    if (!e->job->script) rlvr_sampler_set_turn_limit(d->s, e->slot, (int32_t)(left < room ? left : room));
    return true;
}

/* Tokens into the rollout's KV slot. A scripted rollout never decodes, so
 * nothing would read its slot: its tokens skip the model (rendering SFT's
 * demonstrations was mostly these prefills). Its slot stays reset (length
 * 0), so no sampled rollout forks from it. */
static int feed_model(driver *d, const env *e, const int32_t *ids, int32_t n) {
    if (e->job->script) return 0;
    return rlvr_sampler_prefill(d->s, e->slot, ids, n);
}

/* The group's source holds exactly this rollout's prompt (or prefix) in its
 * slot (it started just before, so nothing was decoded since). */
static bool can_fork(const driver *d, const env *e, const env *group) {
    if (!group || !group->active || group->job->step != e->job->step) return false;
    const rlvr_rollout *g = &group->job->record, *r = &e->job->record;
    return group->shared_len == e->shared_len && rlvr_sampler_len(d->s, group->slot) == e->shared_len &&
           memcmp(g->tokens, r->tokens, (size_t)e->shared_len * sizeof *r->tokens) == 0;
}

/* The prompt (a fork: its prefix) into the rollout's slot: forked from the
 * group's slot when it holds the same tokens, else prefilled. */
static int load_prompt(driver *d, env *e, const env *group) {
    rlvr_harness_job *job = e->job;
    rlvr_rollout *r = &job->record;
    double t0 = rlvr_now();
    if (can_fork(d, e, group)) {
        RLVR_TRY(rlvr_sampler_fork(d->s, e->slot, group->slot, job->sequence));
        job->prompt_shared = true;
    } else {
        RLVR_TRY(rlvr_sampler_reset(d->s, e->slot, job->step, job->sequence));
        RLVR_TRY(feed_model(d, e, r->tokens, e->shared_len));
    }
    r->timings.generate_s += rlvr_now() - t0;
    return 0;
}

static int env_init(driver *d, env *e, rlvr_harness_job *job, int slot) {
    memset(e, 0, sizeof *e);
    e->d = d;
    e->job = job;
    e->slot = slot;
    e->active = true;
    const rlvr_task *t = job->task;
    rlvr_task_budgets_resolve(&t->budgets, &d->opt->budgets, &e->b);
    int32_t ctx = rlvr_sampler_context(d->s);
    e->context_cap = e->b.context_tokens < ctx ? (int32_t)e->b.context_tokens : ctx;
    rlvr_rollout *r = &job->record;
    RLVR_TRY(rlvr_rollout_init(r, 1024, 16));
    snprintf(r->task_id, sizeof r->task_id, "%s", t->id);
    r->seed = rlvr_sampler_config_of(d->s)->seed;
    r->sample_sequence = job->sequence;
    e->cur_state = RLVR_HARNESS_STATE_PRISTINE;
    return rlvr_rl_repetition_new(&e->rep, &d->opt->repetition);
}

/* The prompt, rendered into the record. */
static int start_from_prompt(driver *d, env *e) {
    rlvr_rollout *r = &e->job->record;
    rlvr_token_buf *b = &d->scratch;
    rlvr_token_buf_clear(b);
    RLVR_TRY(rlvr_harness_render_prompt(b, d->tok, e->job->task, d->opt));
    RLVR_TRY(push_buf(r, b, RLVR_TOKEN_PROMPT));
    r->prompt_tokens = e->shared_len = r->n_tokens;
    return 0;
}

/* A fork: the parent's tokens before policy turn p->turn and its turns so
 * far, copied as recorded, and the budgets' state at that point. */
static int start_from_prefix(env *e) {
    const rlvr_harness_prefix *p = e->job->prefix;
    const rlvr_rollout *src = p->record;
    rlvr_rollout *r = &e->job->record;
    int32_t end = p->tokens;
    bool fits = src && p->turn >= 1 && p->turn <= src->n_turns && end <= src->n_tokens &&
                end >= src->turns[p->turn - 1].policy_end && end >= src->turns[p->turn - 1].observation_end &&
                (p->turn == src->n_turns || end == src->turns[p->turn].policy_start);
    if (!fits)
        return RLVR_FAIL(RLVR_EINVAL, "task %s: a fork's prefix must end where its parent's turn %d begins",
                         e->job->task->id, p->turn);
    for (int32_t i = 0; i < end; i++) {
        RLVR_TRY(rlvr_rollout_push_token(r, src->tokens[i], src->logprobs[i], src->entropy[i], src->mask[i]));
        if (src->mask[i] == RLVR_TOKEN_POLICY) {
            e->policy_used++;
            rlvr_rl_repetition_push(e->rep, src->tokens[i]);
        }
    }
    r->prompt_tokens = src->prompt_tokens;
    e->shared_len = end;
    e->job->prefix_policy_tokens = (int32_t)e->policy_used;
    /* every turn before p->turn made a call (an answer would have ended the
     * episode): malformed ones in a row continue the parent's count */
    for (int32_t t = 0; t < p->turn; t++) {
        RLVR_TRY(rlvr_rollout_push_turn(r, &src->turns[t], NULL));
        e->job->calls++;
        e->job->calls_parsed += src->turns[t].call_parsed != 0;
        e->malformed_run = src->turns[t].call_parsed ? 0 : e->malformed_run + 1;
    }
    return 0;
}

/* A fork's workspace: the parent's state restored into a fresh one. */
static int restore_state(env *e) {
    const rlvr_workspace_state *st = e->job->prefix->state;
    if (!st) return 0;
    double t0 = rlvr_now();
    int rc = rlvr_workspace_restore(e->ws, st);
    e->job->snapshot_s += rlvr_now() - t0;
    return rc;
}

/* Starts a rollout in `slot`; `group` is the first rollout of its group that
 * prefilled the prompt (or prefix), started just before it (NULL when none). */
static int env_start(driver *d, env *e, rlvr_harness_job *job, int slot, const env *group) {
    RLVR_TRY(env_init(d, e, job, slot));
    rlvr_rollout *r = &job->record;
    RLVR_TRY(job->prefix ? start_from_prefix(e) : start_from_prompt(d, e));
    emit(d, e, RLVR_HARNESS_EVENT_START, NULL);
    if (e->shared_len >= e->context_cap) {
        r->stop = RLVR_STOP_CONTEXT;
        return 0;
    }
    if (job->task->verifier == RLVR_VERIFIER_TESTS) {
        double t0 = rlvr_now();
        int rc = workspace_open(e, d->opt);
        r->timings.tool_s += rlvr_now() - t0;
        if (rc == 0 && job->prefix) rc = restore_state(e);
        if (rc == RLVR_ENOMEM) return rc;
        if (rc < 0) {
            r->stop = RLVR_STOP_INFRA_ERROR;
            r->verdict = RLVR_VERDICT_INFRA;
            return 0;
        }
    }
    RLVR_TRY(load_prompt(d, e, group));
    begin_turn(d, e);
    return 0;
}

/* The final reply of an arith rollout: the text of its last turn. */
static int score_arith(driver *d, env *e) {
    rlvr_rollout *r = &e->job->record;
    if (r->n_turns == 0) return 0;
    const rlvr_turn *t = &r->turns[r->n_turns - 1];
    rlvr_reply_parts parts;
    rlvr_template_parse_reply(d->tok, r->tokens + t->policy_start, t->policy_end - t->policy_start, &parts);
    int32_t vocab = rlvr_tokenizer_vocab_size(d->tok);
    for (int32_t i = t->policy_start; i < t->policy_start + parts.text_end; i++)
        if (r->tokens[i] < 0 || r->tokens[i] >= vocab) { /* ids no text belongs to: not an answer */
            r->verdict = RLVR_VERDICT_FAIL;
            r->reward.outcome = 0;
            return 0;
        }
    char *text = NULL;
    size_t len = 0;
    int rc = rlvr_template_reply_text(d->tok, r->tokens + t->policy_start, t->policy_end - t->policy_start, &parts,
                                      false, &text, &len);
    double score = 0;
    if (rc == 0) rc = rlvr_arith_score(&e->job->task->arith, text, len, &score);
    free(text);
    RLVR_TRY(rc);
    r->verdict = score == 1.0 ? RLVR_VERDICT_PASS : RLVR_VERDICT_FAIL;
    r->reward.outcome = (float)score;
    return 0;
}

static int env_finish(driver *d, env *e) {
    rlvr_harness_job *job = e->job;
    rlvr_rollout *r = &job->record;
    e->active = false;
    if (r->stop == RLVR_STOP_NONE) r->stop = RLVR_STOP_DONE;
    r->reward.format = job->calls ? (float)job->calls_parsed / (float)job->calls : 0.0f;
    int rc = 0;
    if (e->ws && r->stop != RLVR_STOP_INFRA_ERROR && !job->no_patch) {
        rlvr_extract_result ex;
        double t0 = rlvr_now();
        rc = rlvr_workspace_extract(e->ws, &ex);
        r->timings.tool_s += rlvr_now() - t0;
        if (rc == 0) {
            job->patch = ex.patch;
            job->patch_len = ex.len;
            job->public_tests_changed = ex.public_tests_changed;
            job->patch_reason = ex.reason;
        } else if (rc != RLVR_ENOMEM) {
            r->stop = RLVR_STOP_INFRA_ERROR;
            r->verdict = RLVR_VERDICT_INFRA;
            rc = 0;
        }
    }
    if (rc == 0 && job->task->verifier == RLVR_VERIFIER_ARITH && r->stop == RLVR_STOP_DONE) rc = score_arith(d, e);
    rlvr_workspace_free(e->ws);
    e->ws = NULL;
    rlvr_rl_repetition_free(e->rep);
    e->rep = NULL;
    if (rc == 0) emit(d, e, RLVR_HARNESS_EVENT_END, NULL);
    return rc;
}

/* A turn cut by a ceiling (tokens, context, repetition): recorded without
 * an observation, and the rollout ends. */
static int cut_turn(driver *d, env *e) {
    rlvr_turn turn = {.policy_start = e->turn_start, .policy_end = e->job->record.n_tokens, .exit_status = -1};
    emit(d, e, RLVR_HARNESS_EVENT_POLICY, &turn);
    RLVR_TRY(record_turn(d, e, &turn));
    return env_finish(d, e);
}

/* Appends the observation and prefills it; false when the context is full. */
static int append_observation(driver *d, env *e, const char *text, size_t len, rlvr_turn *turn, bool *more) {
    rlvr_rollout *r = &e->job->record;
    rlvr_token_buf *b = &d->scratch;
    rlvr_token_buf_clear(b);
    RLVR_TRY(rlvr_template_observation(b, d->tok, text, len));
    *more = false;
    if ((int64_t)r->n_tokens + b->n + 1 > e->context_cap) {
        r->stop = RLVR_STOP_CONTEXT;
        return 0;
    }
    turn->observation_start = r->n_tokens;
    RLVR_TRY(push_buf(r, b, RLVR_TOKEN_OBSERVATION));
    turn->observation_end = r->n_tokens;
    double t0 = rlvr_now();
    RLVR_TRY(feed_model(d, e, b->ids, b->n));
    r->timings.generate_s += rlvr_now() - t0;
    *more = true;
    return 0;
}

/* What follows a turn's tool (or its error): the turn limit, the
 * observation, the next turn or the end. */
static int continue_turn(driver *d, env *e, const char *obs, size_t obs_len, bool done) {
    rlvr_rollout *r = &e->job->record;
    if (!done && r->n_turns + 1 >= e->b.turns) {
        r->stop = RLVR_STOP_TURN_LIMIT;
        done = true;
    }
    bool more = false;
    if (!done && obs) RLVR_TRY(append_observation(d, e, obs, obs_len, &e->turn, &more));
    RLVR_TRY(record_turn(d, e, &e->turn));
    if (more && begin_turn(d, e)) return 0;
    return env_finish(d, e);
}

/* The turn's tool has run (e->tool_rc, e->out). */
static int tool_finished(driver *d, env *e) {
    rlvr_rollout *r = &e->job->record;
    int rc = e->tool_rc;
    const char *obs = NULL;
    size_t obs_len = 0;
    bool done = false;
    if (rc == RLVR_ENOMEM) {
        rlvr_error_set(rc, "%s", e->tool_msg);
        goto out;
    }
    if (rc < 0) { /* the sandbox failed: infrastructure, never the policy's score */
        r->stop = RLVR_STOP_INFRA_ERROR;
        r->verdict = RLVR_VERDICT_INFRA;
        done = true;
    } else {
        obs = e->out.text;
        obs_len = e->out.len;
        e->turn.exit_status = e->out.exit_status;
        e->turn.duration_s = (float)e->out.duration_s;
        e->turn.output_truncated = e->out.truncated;
        r->timings.tool_s += e->out.duration_s;
        if (!e->malformed && e->ws && (e->job->capture_tools & (1u << e->call.tool))) {
            rc = capture_state(e);
            if (rc < 0) goto out;
        }
    }
    rc = continue_turn(d, e, obs, obs_len, done);
out:
    harness_tool_outcome_free(&e->out);
    rlvr_tool_call_clear(&e->call);
    e->malformed = false;
    return rc;
}

static void sleep_s(double seconds) {
    struct timespec ts = {.tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* A malformed call's observation as a tool outcome (simulated latency only). */
static int malformed_outcome(const rlvr_tool_error *err, harness_tool_outcome *out) {
    memset(out, 0, sizeof *out);
    out->len = strlen(err->observation);
    out->text = malloc(out->len + 1);
    if (!out->text) return RLVR_FAIL(RLVR_ENOMEM, "out of memory for an observation");
    memcpy(out->text, err->observation, out->len + 1);
    out->exit_status = -1;
    return 0;
}

/* The tool's run has ended: its outcome, then the simulated latency. */
static void tool_ended(env *e) {
    if (e->tool.run) e->tool_rc = harness_tool_finish(&e->tool, e->d->opt->tool_output_bytes, &e->out);
    if (e->tool_rc == 0 && e->latency_s > 0) e->out.duration_s += e->latency_s;
    if (e->tool_rc < 0) snprintf(e->tool_msg, sizeof e->tool_msg, "%s", rlvr_error_last());
    e->ready_at = rlvr_now() + (e->tool_rc == 0 ? e->latency_s : 0);
}

/* The turn's tool (e->call, or e->err when malformed) starts. With overlap
 * the env waits while the others decode (reap_tools delivers the
 * observation); otherwise it runs to its end here. */
static int start_tool(driver *d, env *e) {
    const rlvr_harness_options *o = d->opt;
    e->latency_s = o->simulated_latency ? o->simulated_latency(o->latency_arg, e->job, e->job->record.n_turns) : 0;
    e->tool_rc = e->malformed ? malformed_outcome(&e->err, &e->out)
                              : harness_tool_start(rlvr_workspace_sandbox(e->ws), e->job->task, &e->call,
                                                   e->b.tool_timeout_s, &e->tool);
    if (e->tool_rc < 0 || !e->tool.run) tool_ended(e); /* nothing runs: the outcome is known */
    if (d->overlap) {
        e->waiting = true;
        return 0;
    }
    if (e->tool.run) tool_ended(e);
    sleep_s(e->ready_at - rlvr_now());
    return tool_finished(d, e);
}

/* The malformed-call ceiling: this many malformed calls in a row (0 = no
 * limit) end the rollout; its last turn gets no observation. */
static bool malformed_limit_reached(const env *e) {
    return e->b.malformed_calls > 0 && e->malformed_run >= e->b.malformed_calls;
}

/* A policy turn is complete: read its call; a tool starts (start_tool); a
 * malformed call gets its error, unless it is one too many (stop MALFORMED). */
static int end_turn(driver *d, env *e) {
    rlvr_harness_job *job = e->job;
    rlvr_rollout *r = &job->record;
    const rlvr_task *task = job->task;
    e->turn = (rlvr_turn){.policy_start = e->turn_start, .policy_end = r->n_tokens, .exit_status = -1};
    const int32_t *ids = r->tokens + e->turn_start;
    int32_t n = r->n_tokens - e->turn_start;
    bool ended_by_eos = n > 0 && rlvr_tokenizer_ends_episode(d->tok, ids[n - 1]);

    rlvr_turn_kind kind;
    rlvr_tool_call call;
    rlvr_tool_error err;
    /* a model whose vocabulary is padded past the tokenizer's can sample ids
     * no text belongs to: the turn is malformed, not the harness broken */
    int32_t vocab = rlvr_tokenizer_vocab_size(d->tok);
    bool foreign = false;
    for (int32_t i = 0; i < n; i++) foreign |= ids[i] < 0 || ids[i] >= vocab;
    if (foreign) {
        memset(&call, 0, sizeof call);
        const char *open, *close;
        rlvr_template_call_markers(d->tok, &open, &close);
        rlvr_tool_error_markers(&err, open, close);
        kind = RLVR_TURN_MALFORMED;
    } else {
        RLVR_TRY(rlvr_turn_read_call(&kind, &call, &err, NULL, d->tok, ids, n, task->tools));
    }
    const char *obs = NULL;
    size_t obs_len = 0;
    bool done = kind == RLVR_TURN_ANSWER || ended_by_eos;
    if (kind != RLVR_TURN_ANSWER) job->calls++;
    if (kind == RLVR_TURN_CALL) {
        job->calls_parsed++;
        e->turn.call_parsed = 1;
        snprintf(e->turn.tool_name, sizeof e->turn.tool_name, "%s", rlvr_tool_name(call.tool));
    }
    e->malformed_run = kind == RLVR_TURN_MALFORMED ? e->malformed_run + 1 : 0;
    if (!done && malformed_limit_reached(e)) { /* a derailed policy: the rest of the rollout is lost */
        r->stop = RLVR_STOP_MALFORMED;
        done = true;
    }
    emit(d, e, RLVR_HARNESS_EVENT_POLICY, &e->turn);
    if (kind == RLVR_TURN_CALL) {
        if (call.tool == RLVR_TOOL_SUBMIT) {
            done = true;
            e->turn.exit_status = 0;
        } else if (!done) {
            if (!e->ws) {
                rlvr_tool_call_clear(&call);
                return RLVR_FAIL(RLVR_ESTATE, "task %s: tool %s without a workspace", task->id, e->turn.tool_name);
            }
            e->call = call; /* the env owns the call until the tool is done */
            return start_tool(d, e);
        }
    } else if (kind == RLVR_TURN_MALFORMED && !done && d->opt->simulated_latency) {
        e->malformed = true;
        e->err = err;
        return start_tool(d, e);
    } else if (kind == RLVR_TURN_MALFORMED) {
        obs = err.observation;
        obs_len = strlen(err.observation);
    }
    int rc = continue_turn(d, e, obs, obs_len, done);
    rlvr_tool_call_clear(&call);
    return rc;
}

/* The poll set of the running tools; *wake: the earliest time something
 * is due without any fd (a latency ends, a run's backstop). */
static int gather_fds(driver *d, env *envs, int n, double *wake) {
    int nf = 0;
    *wake = INFINITY;
    for (int i = 0; i < n; i++) {
        if (!envs[i].waiting) continue;
        if (!envs[i].tool.run) {
            *wake = fmin(*wake, envs[i].ready_at);
            continue;
        }
        envs[i].poll_first = nf;
        envs[i].poll_n = rlvr_sandbox_run_pollfds(envs[i].tool.run, d->fds + nf, 3);
        nf += envs[i].poll_n;
        *wake = fmin(*wake, rlvr_sandbox_run_deadline(envs[i].tool.run));
    }
    return nf;
}

/* One round of the event loop over the running tools: poll their pipes
 * (without waiting, or, with `block`, until something happens), advance
 * the runs, and deliver the observations that are due. */
static int reap_tools(driver *d, env *envs, int n, bool block) {
    double wake;
    int nf = gather_fds(d, envs, n, &wake);
    int timeout_ms = 0;
    if (block) {
        double left = wake - rlvr_now();
        timeout_ms = isinf(wake) ? -1 : left <= 0 ? 0 : (int)ceil(left * 1000.0);
    }
    if (poll(d->fds, (nfds_t)nf, timeout_ms) < 0 && errno != EINTR)
        return rlvr_error_errno_at(__FILE__, __LINE__, "poll on the tools' sandboxes");
    for (int i = 0; i < n; i++) { /* every running tool, also one with no fd left (its backstop) */
        env *e = &envs[i];
        if (!e->waiting || !e->tool.run) continue;
        int ended = rlvr_sandbox_run_advance(e->tool.run, d->fds + e->poll_first, e->poll_n);
        if (ended < 0) return ended;
        if (ended) tool_ended(e);
    }
    double now = rlvr_now();
    for (int i = 0; i < n; i++)
        if (envs[i].waiting && !envs[i].tool.run && envs[i].ready_at <= now) {
            envs[i].waiting = false;
            RLVR_TRY(tool_finished(d, &envs[i]));
        }
    return 0;
}

/* Records one policy token; true when the rollout must stop for repetition. */
static int policy_token(env *e, int32_t id, float lp, float ent, bool *repeated) {
    RLVR_TRY(rlvr_rollout_push_token(&e->job->record, id, lp, ent, RLVR_TOKEN_POLICY));
    e->policy_used++;
    *repeated = rlvr_rl_repetition_push(e->rep, id);
    return 0;
}

/* A scripted turn: the script's ids, cut at the budgets, appended by prefill. */
static int scripted_turn(driver *d, env *e) {
    rlvr_harness_job *job = e->job;
    rlvr_rollout *r = &job->record;
    rlvr_token_buf *b = &d->scratch;
    rlvr_token_buf_clear(b);
    RLVR_TRY(job->script(job->script_arg, r, r->n_turns, d->tok, b));
    int64_t left = e->b.policy_tokens - e->policy_used, room = (int64_t)e->context_cap - r->n_tokens;
    int32_t n = b->n;
    rlvr_stop_reason cut = RLVR_STOP_NONE;
    if (n > left) n = (int32_t)left, cut = RLVR_STOP_MAX_TOKENS;
    if (n > room) n = (int32_t)room, cut = RLVR_STOP_CONTEXT;
    bool repeated = false;
    int32_t fed = 0;
    for (; fed < n && !repeated; fed++) RLVR_TRY(policy_token(e, b->ids[fed], 0.0f, 0.0f, &repeated));
    double t0 = rlvr_now();
    if (fed > 0) RLVR_TRY(feed_model(d, e, b->ids, fed));
    r->timings.generate_s += rlvr_now() - t0;
    if (repeated || cut != RLVR_STOP_NONE || b->n == 0) {
        r->stop = repeated ? RLVR_STOP_REPETITION : cut != RLVR_STOP_NONE ? cut : RLVR_STOP_DONE;
        return cut_turn(d, e);
    }
    return end_turn(d, e);
}

/* One batched decode step over every sampling rollout. */
static int decode_step(driver *d, env *envs, int n_envs, int32_t *slots, rlvr_sample *samples, int *which) {
    int n = 0;
    for (int i = 0; i < n_envs; i++)
        if (envs[i].active && !envs[i].waiting && !envs[i].job->script) {
            slots[n] = envs[i].slot;
            which[n++] = i;
        }
    if (n == 0) return 0;
    double t0 = rlvr_now();
    RLVR_TRY(rlvr_sampler_decode(d->s, slots, n, samples));
    double dt = rlvr_now() - t0;
    for (int k = 0; k < n; k++) {
        env *e = &envs[which[k]];
        rlvr_rollout *r = &e->job->record;
        r->timings.generate_s += dt;
        const rlvr_sample *sm = &samples[k];
        bool repeated = false;
        if (sm->token >= 0) RLVR_TRY(policy_token(e, sm->token, sm->logprob, sm->entropy, &repeated));
        if (repeated) r->stop = RLVR_STOP_REPETITION;
        else if (sm->stop == RLVR_SAMPLE_STOP_TOKEN) {
            RLVR_TRY(end_turn(d, e));
            continue;
        } else if (sm->stop == RLVR_SAMPLE_MAX_TOKENS)
            r->stop = e->policy_used >= e->b.policy_tokens ? RLVR_STOP_MAX_TOKENS : RLVR_STOP_CONTEXT;
        else if (sm->stop == RLVR_SAMPLE_CONTEXT)
            r->stop = RLVR_STOP_CONTEXT;
        else
            continue;
        RLVR_TRY(cut_turn(d, e));
    }
    return 0;
}

/* Jobs next.. that form one group with jobs[next]: same task, step and prefix. */
static int group_size(const rlvr_harness_job *jobs, int next, int n) {
    int k = next + 1;
    while (k < n && jobs[k].task == jobs[next].task && jobs[k].step == jobs[next].step &&
           jobs[k].prefix == jobs[next].prefix)
        k++;
    return k - next;
}

/* The size of the next queued group when all of it fits in the free slots
 * (or, when it is larger than the cache, when every slot is free); 0 when it
 * must wait for room, or nothing is queued. */
static int group_fits(const env *envs, int n_slots, const rlvr_harness_job *jobs, int n, int next) {
    int free_slots = 0;
    for (int i = 0; i < n_slots; i++) free_slots += !envs[i].active;
    if (next >= n || free_slots == 0) return 0;
    int g = group_size(jobs, next, n);
    return (g < n_slots ? g : n_slots) <= free_slots ? g : 0;
}

/* Starts queued jobs in free slots a group at a time, each group when it
 * fits: its prompt is prefilled once and forked to the others. */
static int fill_slots(driver *d, env *envs, int n_slots, rlvr_harness_job *jobs, int n, int *next) {
    for (;;) {
        int g = group_fits(envs, n_slots, jobs, n, *next);
        if (g == 0) return 0;
        const env *group = NULL;
        for (int i = 0; i < n_slots && g > 0; i++) {
            if (envs[i].active) continue;
            RLVR_TRY(env_start(d, &envs[i], &jobs[(*next)++], i, group));
            g--;
            if (envs[i].job->record.stop != RLVR_STOP_NONE) RLVR_TRY(env_finish(d, &envs[i]));
            else if (!envs[i].job->prompt_shared) group = &envs[i];
        }
    }
}

int rlvr_harness_run(rlvr_sampler *s, const rlvr_tokenizer *tok, const rlvr_harness_options *opt,
                     rlvr_harness_job *jobs, int n) {
    if (!s || !tok || !opt || (n > 0 && !jobs) || n < 0)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_harness_run: sampler, tokenizer, options and jobs needed");
    if (opt->version != RLVR_HARNESS_OPTIONS_VERSION)
        return RLVR_FAIL(RLVR_EINVAL, "harness options: version %u, this rlvr knows %d", opt->version,
                         RLVR_HARNESS_OPTIONS_VERSION);
    if (opt->budgets.turns < 1 || opt->budgets.policy_tokens < 1 || opt->budgets.context_tokens < 1 ||
        !(opt->budgets.tool_timeout_s > 0) || opt->tool_output_bytes < 1)
        return RLVR_FAIL(RLVR_EINVAL, "harness options: every budget and tool_output_bytes must be > 0");
    if (opt->budgets.malformed_calls < 0)
        return RLVR_FAIL(RLVR_EINVAL, "harness options: budgets.malformed_calls %lld must be >= 0 (0 = no limit)",
                         (long long)opt->budgets.malformed_calls);
    for (int i = 0; i < n; i++)
        if (!jobs[i].task) return RLVR_FAIL(RLVR_EINVAL, "harness job %d has no task", i);
        else if (jobs[i].prefix && jobs[i].capture_tools)
            return RLVR_FAIL(RLVR_EINVAL, "harness job %d: a fork (prefix) captures no workspace states", i);
        else if (jobs[i].task->verifier == RLVR_VERIFIER_TESTS && !opt->host)
            return RLVR_FAIL(RLVR_EINVAL, "task %s: a \"tests\" task needs a sandbox host", jobs[i].task->id);
    int32_t stops[RLVR_TEMPLATE_MAX_STOPS];
    int n_stops = rlvr_template_stop_tokens(tok, stops);
    RLVR_TRY(rlvr_sampler_set_stop_tokens(s, stops, n_stops));

    int n_slots = rlvr_sampler_config_of(s)->kv_slots;
    if (n_slots > n) n_slots = n;
    driver d = {.s = s, .tok = tok, .opt = opt, .overlap = opt->overlap_tools};
    d.fds = calloc((size_t)(n_slots ? n_slots : 1) * 3, sizeof *d.fds);
    env *envs = calloc((size_t)(n_slots ? n_slots : 1), sizeof *envs);
    int32_t *slots = calloc((size_t)(n_slots ? n_slots : 1), sizeof *slots);
    int *which = calloc((size_t)(n_slots ? n_slots : 1), sizeof *which);
    rlvr_sample *samples = calloc((size_t)(n_slots ? n_slots : 1), sizeof *samples);
    int rc = envs && slots && which && samples && d.fds
                 ? 0
                 : RLVR_FAIL(RLVR_ENOMEM, "out of memory for %d rollouts", n);
    int next = 0;
    while (rc == 0) {
        rc = fill_slots(&d, envs, n_slots, jobs, n, &next);
        bool any = false;
        for (int i = 0; i < n_slots; i++) any |= envs[i].active;
        if (rc < 0 || (!any && next >= n)) break;
        /* scripted rollouts write a whole turn; sampling ones one token each, batched */
        for (int i = 0; rc == 0 && i < n_slots; i++)
            if (envs[i].active && !envs[i].waiting && envs[i].job->script) rc = scripted_turn(&d, &envs[i]);
        if (rc == 0) rc = decode_step(&d, envs, n_slots, slots, samples, which);
        /* tools that finished; wait for one when nothing else can move */
        bool runnable = group_fits(envs, n_slots, jobs, n, next) > 0, waiting = false;
        for (int i = 0; i < n_slots; i++) {
            runnable |= envs[i].active && !envs[i].waiting;
            waiting |= envs[i].waiting;
        }
        if (rc == 0 && waiting) rc = reap_tools(&d, envs, n_slots, !runnable);
    }
    for (int i = 0; envs && i < n_slots; i++) {
        if (envs[i].tool.run) harness_tool_abort(&envs[i].tool); /* an error ended the run early */
        harness_tool_outcome_free(&envs[i].out);
        rlvr_tool_call_clear(&envs[i].call);
        rlvr_workspace_free(envs[i].ws);
        rlvr_rl_repetition_free(envs[i].rep);
    }
    free(d.fds);
    rlvr_token_buf_free(&d.scratch);
    free(envs);
    free(slots);
    free(which);
    free(samples);
    return rc;
}

/* ---- verification -------------------------------------------------------------------- */

void rlvr_harness_verify_views_free(rlvr_harness_verify_views *v) {
    free(v->f2p);
    free(v->p2p);
    free(v->protected_globs);
    free(v->public_tests);
    free(v->editable);
    free(v->judge_argv);
    free(v->env);
    free(v->expected);
    memset(v, 0, sizeof *v);
}

int rlvr_harness_verify_spec(rlvr_verify_spec *spec, rlvr_harness_verify_views *v, const rlvr_task *t,
                             const rlvr_sandbox_limits *limits, int consensus_runs) {
    memset(v, 0, sizeof *v);
    if (!t || !limits || consensus_runs < 1 || t->verifier != RLVR_VERIFIER_TESTS)
        return RLVR_FAIL(RLVR_EINVAL, "verify spec: a \"tests\" task, limits and consensus_runs >= 1 needed");
    v->f2p = list_view(&t->fail_to_pass);
    v->p2p = list_view(&t->pass_to_pass);
    v->protected_globs = list_view(&t->protected_paths);
    v->public_tests = list_view(&t->public_test_files);
    v->editable = list_view(&t->editable_paths);
    v->judge_argv = list_view(&t->judge_run);
    v->env = list_view(&t->environment_env);
    v->expected = list_view(&t->expected_files);
    if (!v->f2p || !v->p2p || !v->protected_globs || !v->public_tests || !v->editable || !v->judge_argv || !v->env ||
        !v->expected)
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    *spec = (rlvr_verify_spec){.version = RLVR_VERIFY_SPEC_VERSION, .repo_dir = t->repository_path,
                               .base_commit = t->base_commit, .hidden_dir = t->hidden_root_path,
                               .test_command = t->hidden_test_command, .fail_to_pass = v->f2p,
                               .pass_to_pass = v->p2p, .protected_globs = v->protected_globs,
                               .public_tests = v->public_tests, .limits = *limits,
                               .consensus_runs = consensus_runs, .editable_globs = v->editable,
                               .judge_build = t->judge_build, .judge_argv = t->judge_build ? v->judge_argv : NULL,
                               .build_command = t->hidden_build_command,
                               .network = t->network ? RLVR_SANDBOX_NET_LOOPBACK : RLVR_SANDBOX_NET_NONE,
                               .results_junit = t->hidden_results_junit, .environment = t->environment_path,
                               .workdir = t->environment_workdir, .env = v->env,
                               .expected_dir = t->expected_root_path,
                               .expected_files = t->expected_root ? v->expected : NULL};
    /* the task's author knows how long its tests take: its verifier
     * timeout replaces the run's for every enclave run of the task */
    if (t->budgets.verify_timeout_s > 0) spec->limits.wall_s = spec->limits.cpu_s = t->budgets.verify_timeout_s;
    return 0;
}

int rlvr_harness_verify_task_new(rlvr_verify_task **out, rlvr_sandbox_host *host, const rlvr_task *t,
                                 const rlvr_sandbox_limits *limits, int consensus_runs) {
    *out = NULL;
    if (!host) return RLVR_FAIL(RLVR_EINVAL, "verify task: a sandbox host needed");
    rlvr_verify_spec spec;
    rlvr_harness_verify_views views;
    int rc = rlvr_harness_verify_spec(&spec, &views, t, limits, consensus_runs);
    if (rc == 0) rc = rlvr_verify_task_new(out, host, &spec);
    if (rc < 0 && t) rc = rlvr_error_wrap(rc, "task %s", t->id);
    rlvr_harness_verify_views_free(&views);
    return rc;
}

int rlvr_harness_verify(rlvr_harness_job *job, rlvr_verify_task *vt, uint64_t seed) {
    if (!job || !vt || !job->task || job->task->verifier != RLVR_VERIFIER_TESTS)
        return RLVR_FAIL(RLVR_EINVAL, "rlvr_harness_verify: a finished \"tests\" job and its verify task needed");
    rlvr_rollout *r = &job->record;
    if (r->stop == RLVR_STOP_INFRA_ERROR) {
        r->verdict = RLVR_VERDICT_INFRA;
        return 0;
    }
    if (job->patch_reason != RLVR_REASON_NONE) { /* too large to leave the workspace */
        r->verdict = RLVR_VERDICT_REJECTED;
        r->verdict_reason = job->patch_reason;
        r->reward.outcome = 0;
        return 0;
    }
    rlvr_enclave_verdict v;
    RLVR_TRY(rlvr_verify_patch(vt, job->patch ? job->patch : "", job->patch_len, job->public_tests_changed, seed, &v));
    r->verdict = v.verdict;
    r->verdict_reason = v.reason;
    /* the check's own score: partial credit only where every test result
     * comes from a judge the code under test cannot reach, of the share the
     * task was told to credit */
    float credit = rlvr_verify_task_partial_credit(vt) == RLVR_PARTIAL_CREDIT_FAIL_TO_PASS ? v.f2p_partial : v.partial;
    r->reward.outcome = v.verdict == RLVR_VERDICT_PASS                                  ? 1.0f
                        : v.verdict == RLVR_VERDICT_FAIL && rlvr_verify_task_judged(vt) ? credit
                                                                                        : 0.0f;
    r->timings.verify_s += v.wall_s;
    return 0;
}
