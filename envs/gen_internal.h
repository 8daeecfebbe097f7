/* envs/gen_internal.h — helpers shared by the built-in families (not part of
 * the envs API). */
#ifndef RLVR_ENVS_GEN_INTERNAL_H
#define RLVR_ENVS_GEN_INTERNAL_H

#include "core/rng.h"
#include "core/text.h"
#include "envs/gen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or RLVR_ENOMEM when an append to `t` failed. */
int gen_text_check(const rlvr_text *t);

/* Each family's code: part of its tasks' random streams (gen_stream), so a
 * code never changes. */
enum { FAMILY_BUGFIX_C = 1, FAMILY_ARITH = 2, FAMILY_BUGFIX_PY = 3 };

/* The stream for task `index` of these options. */
void gen_stream(rlvr_rng_stream *s, const rlvr_task_gen_options *opts, uint32_t family_code, int64_t index);

/* True when content with this signature may go to `split`: a hash of the
 * content (FNV-1a mod 10) puts buckets 0-6 in train, 7-8 in eval and 9 in
 * regression, so separately generated splits never share content. */
bool gen_bucket_allows(const char *signature, rlvr_split split);

/* The bugfix compiler of these options ("cc" when none is set). */
const char *gen_compiler(const rlvr_task_gen_options *opts);

/* Writes a whole file, creating its parent directories. */
int gen_write_file(const char *path, const char *text, size_t len);
/* RLVR_EIO when `path` exists: generators never overwrite. */
int gen_must_not_exist(const char *path);

/* A string list from `n` C strings (copied). */
int gen_list(rlvr_str_list *out, const char *const *items, size_t n);
/* strdup or RLVR_ENOMEM. */
int gen_strdup(char **out, const char *s);

/* libgit2 (envs/repo.c). Creates a git repository at `dir` whose only commit
 * holds `n` files (paths relative to dir, contents given), written to the
 * working tree too; author, committer and time are fixed so the commit id
 * depends only on the content. The 40-hex id goes to commit_hex. */
int gen_repo_create(const char *dir, const char *const *paths, const char *const *contents, size_t n,
                    char commit_hex[41]);
/* A unified git diff that turns `before` into `after` (one file). *out is
 * malloc'd. */
int gen_patch(char **out, const char *path, const char *before, const char *after);
/* Applies a unified git patch to the work tree of the repository at `dir`
 * (as `git apply`): all or nothing. */
int gen_apply_patch(const char *dir, const char *patch);

/* Families. */
int gen_arith_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index);
int gen_bugfix_c_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir);
int gen_bugfix_py_task(rlvr_task **out, const rlvr_task_gen_options *opts, int64_t index, const char *out_dir);
int gen_arith_templates(rlvr_split split, const char **names, int cap);
int gen_bugfix_c_templates(rlvr_split split, const char **names, int cap);
int gen_bugfix_py_templates(rlvr_split split, const char **names, int cap);

#endif
