/* cli_batch_list.h — the pair list of `neurowarp-cli batch LIST.csv`: a header naming the
 * columns, then one pair per line. Columns: fixed, moving (required), id, fixed_mask,
 * moving_mask, fixed_labels, moving_labels, initial_transform (optional, in any order; an
 * empty field is "none"). Paths relative to the CSV's folder. Fields are separated by
 * commas, blanks around them are dropped, a field in double quotes may hold commas ("" is a
 * quote); blank lines and lines starting with # are skipped. An id (default: the pair's
 * line number, "line12") is a folder name: letters, digits, '.', '_', '-', not starting
 * with '.'; ids are unique. Only the list is read here: missing image files are the pair's
 * failure when it runs, not the list's. Main thread. */
#ifndef NW_CLI_BATCH_LIST_H
#define NW_CLI_BATCH_LIST_H

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NW_BATCH_FIXED,
  NW_BATCH_MOVING,
  NW_BATCH_FIXED_MASK,
  NW_BATCH_MOVING_MASK,
  NW_BATCH_FIXED_LABELS,
  NW_BATCH_MOVING_LABELS,
  NW_BATCH_INITIAL,
  NW_BATCH_N_PATHS
} NwBatchPath;

typedef struct {
  char *id;
  char *path[NW_BATCH_N_PATHS]; /* resolved against the CSV's folder; NULL when empty */
  int line;                     /* 1-based line of the CSV */
} NwBatchRow;

/* The rows of the list at csv (NwBatchRow*, freed with the array). Errors name the file and
 * the line: "LIST.csv: line 1: no column 'moving' (columns: ...)", "LIST.csv: line 4: 3
 * fields where the header has 2", "LIST.csv: line 1: unknown column 'fxed' (known: ...)",
 * "LIST.csv: line 6: id 'a' repeats line 3", "LIST.csv: no pairs". */
GPtrArray *nw_batch_list_read(const char *csv, GError **error);

G_END_DECLS

#endif
