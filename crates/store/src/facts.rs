//! What a commit hook may know of a resource inside the write's transaction
//! ([`ModuleSql::resource_facts`]): read through the store's own resource and
//! category code, in a file of its own so that `module_sql` does not reach
//! into `resource` (which reaches `store`, which reaches `module_sql`).

use crate::db::Param;
use crate::error::{Result, StoreError};
use crate::model::ResourceId;
use crate::module_sql::ModuleSql;
use crate::resource::{category_id, category_lineage};

/// What [`ModuleSql::resource_facts`] tells of a resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceFacts {
    pub id: ResourceId,
    /// Its category's unique name first, then those of the categories above.
    pub categories: Vec<String>,
    pub published: bool,
    pub name: Option<String>,
    /// 0 for a deleted one.
    pub version: i64,
    /// As text (HTML taken out).
    pub title: Option<String>,
    pub deleted: bool,
}

impl ModuleSql<'_> {
    /// What a commit hook may know of resource `id` inside the transaction:
    /// its categories (its own first, then those above it), whether it is
    /// published, its title and version; for one deleted (in this write or
    /// before), what its tombstone kept. `None` when there is neither.
    pub fn resource_facts(&mut self, id: ResourceId) -> Result<Option<ResourceFacts>> {
        if let Some(r) = crate::resource::load(self.conn, id)? {
            let mut categories = category_lineage(self.conn, r.category)?;
            categories.reverse();
            return Ok(Some(ResourceFacts {
                id,
                categories,
                published: r.published,
                title: r.title().map(crate::html_to_plain),
                name: r.name,
                version: r.version.0,
                deleted: false,
            }));
        }
        let gone = self.conn.query_one(
            "SELECT category, name FROM rsc_deleted WHERE id = $1",
            &[Param::from(id.0)],
        )?;
        let Some(gone) = gone else {
            return Ok(None);
        };
        let category = gone.text(0);
        // The category may have gone since: then its name is all there is.
        let mut categories = match category_id(self.conn, &category) {
            Ok(found) => category_lineage(self.conn, found)?,
            Err(StoreError::UnknownCategory(_)) => vec![category],
            Err(e) => return Err(e),
        };
        categories.reverse();
        Ok(Some(ResourceFacts {
            id,
            categories,
            published: false,
            name: gone.opt_text(1),
            version: 0,
            title: None,
            deleted: true,
        }))
    }
}
