"""Audit a registered algorithm and read its result line by line.

    python examples/read_a_result.py

AdaP-TT (Azize et al. 2023, arXiv:2309.02202, Algorithm 2) at ε = 0.5 on its fixed default
instance, with a small budget. Each printed line says where in the result it comes from
(docs/reference/verdict-json.md).
"""
import dpaudit


def main(runs: int = 20_000) -> dpaudit.AuditResult:
    r = dpaudit.audit_algorithm("adap-tt", 0.5, runs=runs, seed=1, instances="fixed")
    d = r.to_dict()
    m = d["counts"]["measurement"]
    print(f"claim (claim): eps={d['claim']['eps']}, delta={d['claim']['delta']}")
    print(f"verdict (verdict): {r.verdict}, exit code {r.exit_code}"
          + (f"; reason: {r.reason}" if r.reason else ""))
    print(f"lower bound on the measured event's loss (eps_lb): {r.eps_lb:.4f} at confidence "
          f"{d['confidence']:.0%}")
    print(f"upper bound on every measured event's loss (eps_ub): {r.eps_ub:.4f} at confidence "
          f"{d['power']:.0%}; a pass needs <= {(1 + r.margin) * r.eps:.4g}")
    print(f"neighbouring tables (neighbours): {d['neighbours']['model']} tables, "
          f"{d['neighbours'].get('description', d['neighbours'])}")
    print(f"event (event.text): {d['event']['text']}")
    print(f"counts (counts.measurement): d {m['hits_d']}/{m['runs_d']}, "
          f"d' {m['hits_d_prime']}/{m['runs_d_prime']}, stopped: {m['stopped']}")
    wb = d.get("whitebox", {})
    print(f"white-box (whitebox.max_loss, exact accounting of the releases): "
          f"{wb.get('max_loss', float('nan')):.4f}")
    print(f"reproduce (command): {d.get('command') or 'dpaudit.audit_algorithm(...) in Python'}")
    return r


if __name__ == "__main__":
    main()
