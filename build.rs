fn main() {
    // `Py_3_13` and friends for the interpreter maturin builds for (see src/py/host.rs).
    #[cfg(feature = "python")]
    {
        pyo3_build_config::print_expected_cfgs();
        pyo3_build_config::use_pyo3_cfgs();
    }
}
