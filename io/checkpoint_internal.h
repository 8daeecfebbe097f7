/* io/checkpoint_internal.h — what checkpoint.c and checkpoint_model.c share
 * (internal to io/). */
#ifndef RLVR_IO_CHECKPOINT_INTERNAL_H
#define RLVR_IO_CHECKPOINT_INTERNAL_H

#include "io/checkpoint.h"

#include <hdf5.h>
#include <stdbool.h>

struct rlvr_checkpoint_writer {
    char dir[4096], path[4120], part[4128];
    hid_t file;
    rlvr_checkpoint_options opt; /* config_text not kept */
    bool has_model;
};

struct rlvr_checkpoint {
    char path[4096];
    hid_t file;
    rlvr_checkpoint_info info;
    char *config_text;
};

/* RLVR_EINVAL unless `name` is a valid state array name. */
int rlvr_ckpt_check_name(const char *name);

/* True when every component of `path` exists under loc. */
bool rlvr_ckpt_path_exists(hid_t loc, const char *path);

#endif
