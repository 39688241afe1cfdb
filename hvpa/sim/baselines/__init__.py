"""Autoscalers other than hvpa, run in the simulated cluster so that `hvpa sim --compare`
can set hvpa's strategies beside what users run instead.

    vpa_and_hpa.py        the VPAAndHPA baseline: a native HPA and VPA on one workload
    vpa_updater.py        the VPA's updater and admission controller in the model
    vpa_updater_rules.py  the updater's rules on plain data (thresholds, order, pacing)
"""
