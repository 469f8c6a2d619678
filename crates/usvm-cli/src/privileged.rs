//! `--privileged FILE`: the privileged features `x*` of SVM+ and R-SVM+ (learning using privileged
//! information, DESIGN 2.6), in the main input's format (LIBSVM lines `label j:v ...` with --data, a CSV
//! with a header and the label column with --csv, an svm-gsu means file `<id> j:v ...` with --means); its
//! labels are ignored. Rows are joined to the training rows line for line (LIBSVM, CSV) or by id
//! (svm-gsu). The fitted model is a kernel model over `x` only, so `usvm predict` needs no privileged file.

use std::path::Path;

use anyhow::{Context, Result, bail};
use usvm::MethodParams;
use usvm::io::{read_csv, read_libsvm, read_svmgsu};

use crate::input::{Input, InputArgs, open};

/// Reads `--privileged` in the main input's format and attaches it to `input.dataset` for the methods
/// that learn from privileged features; the flag is refused for the others.
pub fn attach(params: &MethodParams, path: Option<&Path>, args: &InputArgs, input: &mut Input) -> Result<()> {
    let path = match (params.uses_privileged(), path) {
        (false, None) => return Ok(()),
        (false, Some(_)) => bail!("--privileged does not apply to --method {}", params.name()),
        (true, None) => bail!("--method {} needs --privileged FILE (the privileged features x*)", params.name()),
        (true, Some(path)) => path,
    };
    let source = path.display().to_string();
    let n = input.dataset.n_samples();
    let privileged = if let Some(means) = &args.means {
        // Joined by id: the privileged means read against the training labels come out in the same order.
        let labels = args.labels.as_ref().with_context(|| format!("{} needs --labels", means.display()))?;
        let read = read_svmgsu(
            (open(path)?, &source),
            (open(labels)?, &labels.display().to_string()),
            None,
            Default::default(),
        )?;
        if read.dataset.n_samples() != n || !read.skipped.is_empty() {
            bail!(
                "{source}: privileged ids do not match the training ids ({} of {n} joined)",
                read.dataset.n_samples()
            );
        }
        read.dataset.features
    } else if args.csv.is_some() {
        read_csv(open(path)?, &source, args.label_col.as_deref())?.features
    } else {
        read_libsvm(open(path)?, &source, None)?.features
    };
    if privileged.n_samples() != n {
        bail!("{source}: {} privileged rows for {n} training examples", privileged.n_samples());
    }
    input.dataset.privileged = Some(privileged);
    Ok(())
}
