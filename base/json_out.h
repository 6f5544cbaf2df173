/* json_out.h - writing JSON text to a stream.
 *
 * The simulator's output and the command line's `-o json` views write
 * their JSON by hand, field by field; this is the one piece they share:
 * a string, quoted and escaped as RFC 8259 requires (the quote, the
 * backslash and the control characters; other bytes, UTF-8 included, as
 * they are). Stream errors are the caller's to check (ferror). O(length).
 */
#ifndef KB_BASE_JSON_OUT_H
#define KB_BASE_JSON_OUT_H

#include <stdio.h>

/* s as a JSON string; NULL writes "". */
void kb_json_put_str(FILE *out, const char *s);

#endif
