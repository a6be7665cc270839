{{/* Names, labels and the image, shared by every template of the chart. */}}

{{/* The release's name prefix: the release name, or "envhook" inside it when the name lacks it. */}}
{{- define "envhook.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "envhook.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels a component's selector uses: never changed by an upgrade. Argument: (list . "component"). */}}
{{- define "envhook.selectorLabels" -}}
{{- $top := index . 0 -}}
app.kubernetes.io/name: {{ $top.Chart.Name }}
app.kubernetes.io/instance: {{ $top.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/* Every object's labels. Argument: (list . "component"). */}}
{{- define "envhook.labels" -}}
{{- $top := index . 0 -}}
{{ include "envhook.selectorLabels" . }}
app.kubernetes.io/version: {{ $top.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $top.Release.Service }}
helm.sh/chart: {{ include "envhook.chart" $top }}
{{- end -}}

{{/* repository:tag, or repository@digest when a digest is given. */}}
{{- define "envhook.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The port of metrics.address (its last :NNNN). */}}
{{- define "envhook.metricsPort" -}}
{{- regexFind "[0-9]+$" .Values.metrics.address -}}
{{- end -}}

{{/* The pods directory of the kubelet root. */}}
{{- define "envhook.podsDir" -}}
{{- printf "%s/pods" (.Values.kubeletRoot | trimSuffix "/") -}}
{{- end -}}

{{/* The CRI socket the NRI pod evicts through (docs/nri-guarantees.md#evicting-missed-containers): criSocket, else with evictUnapplied containerRuntime's own (the sockets the plugin itself looks for); empty: none mounted. */}}
{{- define "envhook.criSocket" -}}
{{- if .Values.criSocket -}}
{{- .Values.criSocket -}}
{{- else if .Values.evictUnapplied -}}
{{- ternary "/run/containerd/containerd.sock" "/var/run/crio/crio.sock" (eq .Values.containerRuntime "containerd") -}}
{{- end -}}
{{- end -}}

{{/* What cannot be said in values.schema.json: combinations. */}}
{{- define "envhook.checks" -}}
{{- if not (or .Values.nri.enabled .Values.installer.enabled .Values.runtimeClass.enabled) -}}
{{- fail "nri.enabled, installer.enabled and runtimeClass.enabled are all false: nothing to install; set one of them true" -}}
{{- end -}}
{{- if and .Values.nri.enabled .Values.installer.enabled (eq .Values.installer.mode "nri") -}}
{{- fail "installer.mode nri with nri.enabled: two envhook registrations on every node; set installer.mode shim (the guard) or nri.enabled false" -}}
{{- end -}}
{{- $cri := include "envhook.criSocket" . -}}
{{- if and $cri (has (dir $cri) (list .Values.runDir (include "envhook.podsDir" .))) -}}
{{- fail (printf "criSocket %s: its directory is runDir or the kubelet's pods directory, mounted for other uses; set criSocket to the runtime's own CRI socket" $cri) -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.service.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled (the Service it selects)" -}}
{{- end -}}
{{- if and (or .Values.metrics.service.enabled .Values.metrics.podMonitor.enabled) (not .Values.metrics.address) -}}
{{- fail "metrics.service.enabled and metrics.podMonitor.enabled need metrics.address (no endpoint without it)" -}}
{{- end -}}
{{- if and (or .Values.metrics.service.enabled .Values.metrics.podMonitor.enabled) (not .Values.nri.enabled) -}}
{{- fail "metrics.service.enabled and metrics.podMonitor.enabled need nri.enabled (the metrics are the NRI plugin's)" -}}
{{- end -}}
{{- end -}}
