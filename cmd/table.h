/* table.h - aligned text tables and ages, as kubectl prints them, for
 * `kube-batchd top` and `explain`.
 *
 * A table is a header row and rows of cells (copied); printed with each
 * column as wide as its widest cell, three spaces between columns, the
 * last column unpadded and no trailing blanks. A NULL or empty cell prints
 * as "-" (kubectl's "<none>" is longer than the tables need).
 *
 * Errors: -ENOMEM (the table is unchanged), -EINVAL (no columns).
 * Cost: adding a row O(cells); printing O(cells). Pure: no I/O but the
 * FILE given, no global state.
 */
#ifndef KB_CMD_TABLE_H
#define KB_CMD_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/vec.h"

typedef struct kb_table {
	uint32_t ncols;
	KB_VEC(char *) cells; /* row-major, the header first; owned */
} kb_table;

/* A table of ncols columns headed by headers[0..ncols). */
int kb_table_init(kb_table *t, uint32_t ncols, const char *const *headers);
/* Appends one row of t->ncols cells. */
int kb_table_add(kb_table *t, const char *const *cells);
/* Rows added, the header aside. */
size_t kb_table_rows(const kb_table *t);
void kb_table_print(const kb_table *t, FILE *out);
void kb_table_release(kb_table *t);

/* An age as kubectl prints it (apimachinery's duration.HumanDuration):
 * "45s", "3m20s", "25m", "5h10m", "30h", "3d4h", "40d", "2y10d", "9y";
 * "0s" for a small negative, "<invalid>" below -1 s. Returns buf. */
const char *kb_format_age(int64_t ms, char *buf, size_t n);

/* A share as a percentage with one decimal, as Arena prints its totals:
 * "75.0%"; "0.0%" when total is 0. Returns buf. */
const char *kb_format_percent(int64_t part, int64_t total, char *buf, size_t n);

#endif
