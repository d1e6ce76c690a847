//! Weighing files recorded before their sizes were: read from the disk when
//! the site's store opens, so the quota counts them.

use std::path::Path;

use bulwark_store::{Store, StoreError};

use crate::originals::{is_hash, stored_path};

/// Gives files recorded before the store knew sizes (`media_file` before its
/// second migration) their size from the disk, so the quota counts them.
pub(crate) fn weigh_files(store: &Store, media: &Path) -> Result<(), StoreError> {
    store.module_write(|sql| {
        let unweighed = sql.query("SELECT DISTINCT sha256 FROM media_file WHERE size = 0", &[])?;
        for row in unweighed {
            let sha256 = row.text(0);
            if !is_hash(&sha256) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(stored_path(media, &sha256)) else {
                continue;
            };
            sql.execute(
                "UPDATE media_file SET size = $1 WHERE sha256 = $2 AND size = 0",
                &[(meta.len() as i64).into(), sha256.as_str().into()],
            )?;
        }
        Ok(())
    })
}
