/* io/config.c — [run], [checkpoint] and [shards]. */
#include "io/config.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

const rlvr_config_key rlvr_io_config_keys[] = {
    RLVR_KEY_STRING("run", "name", rlvr_io_settings, name, "run",
        "name of the run: its files go to <out_dir>/<name>/ (letters, digits, . _ -)"),
    RLVR_KEY_STRING("run", "out_dir", rlvr_io_settings, out_dir, "runs", "directory that holds the run directories"),
    RLVR_KEY_U64("run", "seed", rlvr_io_settings, seed, "1234", 0, 9.2e18,
        "root seed of every random stream of the run (Philox key)"),
    RLVR_KEY_I64("checkpoint", "every", rlvr_io_settings, checkpoint_every, "50", 1, 1e12,
        "optimizer steps between checkpoints"),
    RLVR_KEY_I32("checkpoint", "keep", rlvr_io_settings, checkpoint_keep, "3", 0, 1e6,
        "newest checkpoints kept; older ones are deleted (0 keeps all)"),
    RLVR_KEY_I64("checkpoint", "keep_every", rlvr_io_settings, checkpoint_keep_every, "0", 0, 1e12,
        "also keep the checkpoint of every step that is a multiple of this, forever (0: none)"),
    RLVR_KEY_I32("checkpoint", "compression", rlvr_io_settings, checkpoint_compression, "0", 0, 9,
        "deflate level of checkpoint datasets (0: none; weights barely compress)"),
    RLVR_KEY_BOOL("shards", "write", rlvr_io_settings, shards, "true", "write every step's rollouts to shards"),
    RLVR_KEY_I32("shards", "compression", rlvr_io_settings, shard_compression, "1", 0, 9,
        "deflate level of shard datasets, after a byte shuffle (0: checksums only)"),
    RLVR_KEY_I64("shards", "chunk_tokens", rlvr_io_settings, shard_chunk_tokens, "65536", 256, 67108864,
        "tokens per chunk of the per-token arrays"),
    RLVR_KEY_END,
};

static bool plain_name(const char *s) {
    if (!s[0] || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || c == '.';
        if (!ok) return false;
    }
    return true;
}

static int join(char *out, const char *a, const char *b) {
    int n = snprintf(out, RLVR_IO_PATH_CAP, "%s/%s", a, b);
    if (n < 0 || n >= RLVR_IO_PATH_CAP) return RLVR_FAIL(RLVR_ECONFIG, "path %s/%s is too long", a, b);
    return 0;
}

int rlvr_io_settings_read(rlvr_io_settings *out, const rlvr_config *cfg) {
    memset(out, 0, sizeof *out);
    RLVR_TRY(rlvr_config_fill(cfg, rlvr_io_config_keys, NULL, out));
    if (!plain_name(out->name))
        return rlvr_config_error(cfg, "run", "name",
                                 "\"%s\" is not a plain name (use letters, digits, '.', '_' and '-'): it names "
                                 "the directory <out_dir>/<name>",
                                 out->name);
    if (!out->out_dir[0]) return rlvr_config_error(cfg, "run", "out_dir", "must not be empty (use . for here)");
    char run_dir[RLVR_IO_PATH_CAP];
    RLVR_TRY(join(run_dir, out->out_dir, out->name));
    return rlvr_io_settings_set_run_dir(out, run_dir);
}

int rlvr_io_settings_set_run_dir(rlvr_io_settings *s, const char *run_dir) {
    if (!run_dir[0]) return RLVR_FAIL(RLVR_EINVAL, "empty run directory");
    int n = snprintf(s->run_dir, sizeof s->run_dir, "%s", run_dir);
    if (n < 0 || n >= (int)sizeof s->run_dir) return RLVR_FAIL(RLVR_ELIMIT, "run directory path too long: %s", run_dir);
    RLVR_TRY(join(s->shard_dir, s->run_dir, "shards"));
    RLVR_TRY(join(s->checkpoint_dir, s->run_dir, "checkpoints"));
    RLVR_TRY(join(s->metrics_path, s->run_dir, "metrics.h5"));
    RLVR_TRY(join(s->manifest_path, s->run_dir, "manifest.h5"));
    return 0;
}

rlvr_shard_options rlvr_io_shard_options(const rlvr_io_settings *s) {
    rlvr_shard_options o = RLVR_SHARD_OPTIONS_INIT;
    o.compression = s->shard_compression;
    o.chunk_tokens = s->shard_chunk_tokens;
    return o;
}

bool rlvr_io_checkpoint_due(const rlvr_io_settings *s, int64_t step) {
    return step > 0 && s->checkpoint_every > 0 && step % s->checkpoint_every == 0;
}

rlvr_checkpoint_options rlvr_io_checkpoint_options(const rlvr_io_settings *s, const rlvr_config *cfg,
                                                   int64_t step, int64_t policy_version) {
    rlvr_checkpoint_options o = RLVR_CHECKPOINT_OPTIONS_INIT;
    o.step = step;
    o.policy_version = policy_version;
    o.config_text = cfg ? rlvr_config_text(cfg) : NULL;
    o.config_hash = cfg ? rlvr_config_hash(cfg) : 0;
    o.compression = s->checkpoint_compression;
    o.keep_last = s->checkpoint_keep;
    o.mark = s->checkpoint_keep_every > 0 && step % s->checkpoint_keep_every == 0;
    return o;
}
