/* policy/bpe.h — byte-pair encoding for the BPE tokenizer
 * (policy/tokenizer.h): how text is cut into pieces before merging, and
 * learning merges from a corpus.
 *
 * Pieces ("rlvr-pieces/1"). Merges never cross a piece boundary, so a code
 * fragment gets the same tokens wherever it appears (in a file the policy
 * reads and in the JSON string of its edit). Bytes fall in classes: letters
 * (A-Z a-z _ and every byte >= 0x80, so UTF-8 stays whole), digits, blanks
 * (space, tab), newlines (\n, \r), the backslash, and punctuation (the rest).
 * From a position, a piece is
 *   - a run of letters, one digit, a run of punctuation, or a run of
 *     newlines;
 *   - a backslash and the byte after it (the JSON escapes \n \" \\);
 *   - a run of blanks, except that a space right before a letter, digit or
 *     punctuation byte is left to start the next piece;
 *   - such a space followed by a letter run, a digit or a punctuation run
 *     (" return", " 0", " (");
 * and no piece is longer than RLVR_BPE_MAX_PIECE bytes (a longer run is cut
 * there). */
#ifndef RLVR_POLICY_BPE_H
#define RLVR_POLICY_BPE_H

#include <stddef.h>
#include <stdint.h>

#define RLVR_BPE_PIECES "rlvr-pieces/1"
#define RLVR_BPE_MAX_PIECE 64

/* End (exclusive) of the piece that starts at text[at]; at < len. */
size_t rlvr_bpe_piece_end(const char *text, size_t len, size_t at);

/* Counts pieces of a corpus, then learns merges from the counts. */
typedef struct rlvr_bpe_trainer rlvr_bpe_trainer;

int rlvr_bpe_trainer_new(rlvr_bpe_trainer **out);
void rlvr_bpe_trainer_free(rlvr_bpe_trainer *t);

/* Adds one text of the corpus (the text between special tokens: a corpus
 * holds no specials). RLVR_ENOMEM. */
int rlvr_bpe_trainer_add(rlvr_bpe_trainer *t, const char *text, size_t len);

/* Learns up to max_merges merges over the counted pieces: each time the
 * adjacent pair of ids that occurs most often (ties: the smaller left id,
 * then the smaller right id) becomes the next id, first_id + its index, and
 * every occurrence is replaced. Stops early when no pair occurs min_count
 * times. *merges (malloc'd, the caller frees) holds 2 · *n_merges ids,
 * left and right of each merge in order; ids below 256 are bytes, so
 * first_id is 256 + the tokenizer's special count. RLVR_ENOMEM. */
int rlvr_bpe_learn(rlvr_bpe_trainer *t, int32_t first_id, int32_t max_merges, int64_t min_count, int32_t **merges,
                   int32_t *n_merges);

/* Pieces and bytes counted so far. */
void rlvr_bpe_trainer_counts(const rlvr_bpe_trainer *t, int64_t *pieces, int64_t *bytes);

#endif
