/* metrics_sample - prints the /metrics text of a populated view
 * (tests/unit/metrics_fixture.h), formatted by the daemon's own code: the
 * names a dashboard may use (check_dashboard.py reads them from here). */
#include <stdio.h>
#include <stdlib.h>

#include "../unit/metrics_fixture.h"

int main(void)
{
	metrics_fixture fx;
	metrics_fixture_init(&fx);
	char *text = NULL;
	int r = kb_metrics_text(&fx.view, &text);
	metrics_fixture_release(&fx);
	if (r < 0) {
		fprintf(stderr, "metrics_sample: formatting failed (%d)\n", r);
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}
