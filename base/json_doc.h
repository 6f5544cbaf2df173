/* json_doc.h - JSON texts as the same trees yaml_doc.h builds, fast.
 *
 * Every watch event and LIST response from the API server is JSON. JSON
 * is YAML, so kb_yaml_load_buffer() reads it, but through libyaml's
 * events and a malloc for each of them. kb_json_load_buffer() reads only
 * JSON (RFC 8259, strictly) and builds the very same kb_yaml_node tree,
 * so every decoder that walks a kb_yaml_file (cache/objects.c and the
 * rest) works unchanged whichever loader made it.
 *
 * Ownership: as for kb_yaml_load_buffer(): all nodes and strings live in
 * ret->arena and are freed by kb_yaml_file_release(). Nodes are read-only
 * after loading.
 *
 * The tree, for a text both loaders accept (see the differences below),
 * is the one kb_yaml_load_buffer() builds, node for node, with the same
 * kind, str, len, plain, n, line and col:
 *  - the root is docs[0] (ndocs 1); a text of only whitespace gives
 *    ndocs 0, as an empty YAML document does;
 *  - an object is a KB_YAML_MAP with its pairs in text order, each key a
 *    scalar with plain false; an array is a KB_YAML_SEQ;
 *  - a string is a KB_YAML_SCALAR with plain false and the decoded text
 *    (NUL-terminated; len counts its bytes, including the NUL that a
 *    \u0000 escape puts inside it);
 *  - a number, true, false and null are KB_YAML_SCALARs with plain true and
 *    their text exactly as written, so kb_yaml_int(), kb_yaml_double(),
 *    kb_yaml_bool() and kb_yaml_is_null() read them as they read YAML;
 *  - line and col are 1-based and count as libyaml does: "\n", "\r\n" and
 *    a lone "\r" each end a line, and a column counts characters, not
 *    bytes (a UTF-8 sequence before a node on its line counts once).
 *
 * Strictness: anything RFC 8259 forbids fails with -EINVAL and err->msg
 * "name:line:col: reason": an unexpected character, a string that is not
 * closed, a control character (below U+0020) in a string, a bad escape, a
 * lone or misordered surrogate escape, a malformed number ("01", "1.",
 * ".5", "-", "+1", "1e"), a missing ',' or ':', a trailing comma, anything
 * but whitespace after the root value, and a key that repeats an earlier
 * one in the same object ("duplicate key \"k\" (first at line L, column
 * C)", as the YAML loader says). Bytes of 0x80 and above inside strings
 * are passed through as they are, without checking that they are valid
 * UTF-8; outside strings they are unexpected characters (so is a byte
 * order mark).
 *
 * Limits, as the YAML loader's: input size 64 MiB, nesting depth 64, 10
 * million nodes (keys count); exceeding one fails with -E2BIG. Allocation
 * failure gives -ENOMEM. err->code is always the value returned.
 *
 * Differences from kb_yaml_load_buffer() on the same bytes:
 *  - it accepts texts libyaml refuses, giving them the JSON meaning:
 *    surrogate pair escapes ("\ud83d\ude00"), keys longer than 1024
 *    characters, a ':' on the line after its key, a tab that starts a
 *    line outside the root collection (before or after the root value),
 *    invalid UTF-8 and non-printable characters (U+007F, C1 controls,
 *    U+FEFF, ...) inside strings;
 *  - it refuses texts libyaml accepts but JSON does not (a trailing comma,
 *    "01", comments, unquoted strings, several documents, ...);
 *  - a raw U+0085, U+2028 or U+2029 inside a string is a line break for
 *    libyaml, which folds it (and the blanks after it) and starts a new
 *    line; here it is text like any other, and lines do not change;
 *  - error messages say what JSON expected, not what libyaml did, and a
 *    syntax error is placed where JSON finds it (an unterminated string
 *    at its opening quote, for one).
 */
#ifndef KB_BASE_JSON_DOC_H
#define KB_BASE_JSON_DOC_H

#include <stddef.h>

#include "base/error.h"
#include "base/yaml_doc.h"

/* Parses one JSON text (RFC 8259) from buf (len bytes, need not be
 * NUL-terminated; NULL is an empty text) into *ret: the tree
 * kb_yaml_load_buffer() builds for the same text. `name` is used in
 * messages (NULL gives "<buffer>"). Returns 0, or -EINVAL (syntax),
 * -E2BIG (a limit) or -ENOMEM with err->msg "name:line:col: reason" ("name:
 * reason" for the size limit and -ENOMEM; err may be NULL) and *ret
 * released (safe to release again).
 * Cost: O(len) with no malloc per node: nodes and strings come from the
 * arena, and the children of open collections gather on one stack (on the
 * C stack while it holds at most 256 of them). */
int kb_json_load_buffer(const char *buf, size_t len, const char *name, kb_yaml_file *ret,
			kb_err *err);

#endif
