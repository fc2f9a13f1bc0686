use sim::scheduler::{explore, ExploreConfig};
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let red = args[1] == "red";
    let pb: Option<u32> = args[2].parse().ok();
    let params: Vec<(String, String)> = args[3..].chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect();
    let m = sim::models::find(&args[0]).unwrap().configure(&params).unwrap();
    let t = std::time::Instant::now();
    let r = explore(&m, &ExploreConfig { preemption_bound: pb, reduction: red, max_executions: 2_000_000, max_steps: 100_000 });
    println!("{} {:?} red={red} pb={pb:?}: executions {} pruned {} exhausted {} failure {:?} nondet {:?} ({:.2}s)", args[0], params, r.executions, r.pruned, r.exhausted, r.failure.as_ref().map(|f| f.0.outcome.summary()), r.nondeterminism, t.elapsed().as_secs_f64());
}
