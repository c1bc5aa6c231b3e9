//! Times test-parameter generation for one circuit: `setup_time KIND SIZE DIR`.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let id = cuzk_filecoin::CircuitId::new(args[1].parse()?, args[2].parse()?);
    let started = std::time::Instant::now();
    let shape = id.compile()?;
    println!(
        "{id}: {} constraints, {} inputs, compiled in {:.1} s",
        shape.num_constraints(),
        shape.num_inputs(),
        started.elapsed().as_secs_f64()
    );
    let (_, report) = cuzk_filecoin::params::setup(
        id,
        std::path::Path::new(&args[3]),
        &mut rand::thread_rng(),
        None,
    )?;
    println!(
        "{id}: generated in {:.1} s: {}",
        report.seconds,
        report.params.display()
    );
    Ok(())
}
