{{/*
Names and labels shared by the templates.

kube-batchd.name       the chart name (nameOverride)
kube-batchd.fullname   the objects' name: the release name when it holds the
                       chart name (release "kube-batchd" gives "kube-batchd",
                       as deploy/ names them), else RELEASE-CHART
                       (fullnameOverride); at most 63 characters
kube-batchd.namespace  .Values.namespace, or the release's namespace when empty
kube-batchd.labels     every object's labels; deploy/ has only the first,
                       the others are helm's usual ones
kube-batchd.selectorLabels  the Deployment's selector and the Service's
*/}}
{{- define "kube-batchd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kube-batchd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kube-batchd.namespace" -}}
{{- default .Release.Namespace .Values.namespace -}}
{{- end -}}

{{- define "kube-batchd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-batchd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kube-batchd.labels" -}}
{{ include "kube-batchd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
kube-batchd.crdFiles: the CRD files of the families enabled in .Values.crds,
as a list of paths under files/crds/ (copies of deploy/crds/, checked
identical by tests/e2e/helm.sh).
*/}}
{{- define "kube-batchd.crdFiles" -}}
{{- $families := dict
  "kubeBatch" (list "scheduling.incubator.k8s.io_podgroups.yaml" "scheduling.incubator.k8s.io_queues.yaml")
  "volcano" (list "scheduling.volcano.sh_podgroups.yaml" "scheduling.volcano.sh_queues.yaml")
  "schedulerPlugins" (list "scheduling.x-k8s.io_podgroups.yaml") -}}
{{- $files := list -}}
{{- range $family := list "kubeBatch" "volcano" "schedulerPlugins" -}}
{{- if index $.Values.crds $family -}}
{{- $files = concat $files (index $families $family) -}}
{{- end -}}
{{- end -}}
{{- toJson $files -}}
{{- end -}}

{{/*
kube-batchd.crdForeign: "true" when the CRD named by the argument's .name
exists in the cluster and was not installed by this release (helm's
meta.helm.sh/release-name and release-namespace annotations), e.g. volcano's
own: the chart then leaves it out, as `kubectl create -k deploy/crds`
leaves it untouched. Without a cluster (helm template, lint, a client-side
dry run) lookup finds nothing and every enabled CRD is rendered.
*/}}
{{- define "kube-batchd.crdForeign" -}}
{{- $live := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" .name -}}
{{- if $live -}}
{{- $ann := dig "metadata" "annotations" dict $live -}}
{{- if not (and (eq (get $ann "meta.helm.sh/release-name") .root.Release.Name) (eq (get $ann "meta.helm.sh/release-namespace") .root.Release.Namespace)) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}
