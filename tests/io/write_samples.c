/* io_write_samples DIR — writes one file of every kind rlvr writes (shard,
 * checkpoint, metrics, manifest) into the existing directory DIR, for the
 * h5py / h5dump readers test and the `rlvr inspect` test, and prints their
 * paths, one per line. */
#include "io_samples.h"

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: io_write_samples DIR\n");
        return 2;
    }
    char paths[4][4200];
    int rc = sample_shard(argv[1], 12, paths[0], sizeof paths[0]);
    if (rc == 0) rc = sample_checkpoint(argv[1], paths[1], sizeof paths[1]);
    if (rc == 0) rc = sample_metrics(argv[1], 30, paths[2], sizeof paths[2]);
    if (rc == 0) rc = sample_manifest(argv[1], paths[3], sizeof paths[3]);
    if (rc < 0) {
        fprintf(stderr, "io_write_samples: %s\n", rlvr_error_last());
        return 1;
    }
    for (int i = 0; i < 4; i++) printf("%s\n", paths[i]);
    return 0;
}
