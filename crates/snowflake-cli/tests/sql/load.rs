//! Many clients at once, each taking IDs from a generator the way an
//! application does: `SELECT <prefix>_next_id()` and `INSERT ... DEFAULT`,
//! each statement a transaction of its own, one in ten rolled back; and what
//! every ID they got must show.

use crate::db::{Db, Place, snowflake};
use crate::support::Printed;

/// How a statement took its ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    Select,
    Insert,
}

/// One ID a client got, the database clock read just after it in the same
/// statement, and how.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    /// The ID as the database's bigint holds it.
    pub id: i64,
    pub clock_ms: i64,
    pub way: Way,
    pub rolled_back: bool,
}

/// Clients taking IDs from one generator, into one table.
#[derive(Debug)]
pub struct Load<'a> {
    pub place: Place,
    /// `<prefix>_next_id`.
    pub function: &'a str,
    /// A table whose `id` the generator fills, made by [`Load::create_table`].
    pub table: &'a str,
    pub clients: usize,
    pub ids_each: usize,
}

impl Load<'_> {
    /// The table whose `id` the generator fills: by a column default in
    /// PostgreSQL, by a trigger in MariaDB, as the script's comment says.
    pub fn create_table(&self) {
        let (t, f) = (self.table, self.function);
        let sql = match self.place.db {
            Db::Postgres => format!(
                "DROP TABLE IF EXISTS {t};\n\
                 CREATE TABLE {t} (id bigint PRIMARY KEY DEFAULT {f}(), client int NOT NULL);\n"
            ),
            Db::Mariadb => format!(
                "DROP TABLE IF EXISTS {t};\n\
                 CREATE TABLE {t} (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, client INT NOT NULL);\n\
                 CREATE TRIGGER {t}_id BEFORE INSERT ON {t} FOR EACH ROW\n\
                 \x20 SET NEW.id = IF(NEW.id = 0, {f}(), NEW.id);\n"
            ),
        };
        self.place.run(&sql).unwrap();
    }

    /// The statement that takes one ID and returns it with the clock and a
    /// mark of how it was taken (upper case: rolled back).
    fn statement(&self, client: usize, way: Way, rolled_back: bool) -> String {
        let clock = self.place.db.clock_ms();
        let mark = match (way, rolled_back) {
            (Way::Select, false) => "s",
            (Way::Select, true) => "S",
            (Way::Insert, false) => "i",
            (Way::Insert, true) => "I",
        };
        let statement = match way {
            Way::Select => format!("SELECT {}(), {clock}, '{mark}';", self.function),
            Way::Insert => format!(
                "INSERT INTO {} (id, client) VALUES (DEFAULT, {client}) RETURNING id, {clock}, '{mark}';",
                self.table
            ),
        };
        match rolled_back {
            true => format!("START TRANSACTION;\n{statement}\nROLLBACK;\n"),
            false => format!("{statement}\n"),
        }
    }

    /// Runs the clients at once; each one's IDs in the order it got them.
    pub fn run(&self) -> Vec<Vec<Taken>> {
        let scripts: Vec<String> = (0..self.clients)
            .map(|client| {
                (0..self.ids_each)
                    .map(|i| {
                        let way = if i % 2 == 0 { Way::Select } else { Way::Insert };
                        self.statement(client, way, i % 10 >= 8)
                    })
                    .collect()
            })
            .collect();
        self.place
            .clients(&scripts)
            .into_iter()
            .enumerate()
            .map(|(client, out)| {
                let out = out.unwrap_or_else(|err| panic!("client {client} failed: {err}"));
                out.lines().map(parse).collect()
            })
            .collect()
    }

    /// Everything the IDs must show; `layout` is how `snowflake decode`
    /// is told the layout, `node` the generator's node values.
    pub fn check(&self, taken: &[Vec<Taken>], layout: &[&str], node: &[(&str, u64)]) {
        for (client, ids) in taken.iter().enumerate() {
            assert_eq!(ids.len(), self.ids_each, "client {client}'s IDs");
            for pair in ids.windows(2) {
                assert!(
                    (pair[0].id as u64) < (pair[1].id as u64),
                    "client {client} got {} after {}",
                    pair[1].id,
                    pair[0].id
                );
            }
        }
        let all: Vec<Taken> = taken.iter().flatten().copied().collect();
        assert_no_duplicates(&all);
        for way in [Way::Select, Way::Insert] {
            for rolled_back in [false, true] {
                assert!(
                    all.iter()
                        .any(|t| t.way == way && t.rolled_back == rolled_back),
                    "some {way:?} with rolled_back {rolled_back}"
                );
            }
        }
        let decoded = decode(layout, &all);
        let mut lines = decoded.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
        let time_column = column("timestamp_ms");
        let node_columns: Vec<(usize, String)> = node
            .iter()
            .map(|(name, value)| (column(name), value.to_string()))
            .collect();
        let mut count = 0;
        for (t, line) in all.iter().zip(lines) {
            let row: Vec<&str> = line.split(',').collect();
            let time: i64 = row[time_column].parse().unwrap();
            // The ID's time is its tick's start: never after the clock read
            // after it, and close to it.
            assert!(
                time <= t.clock_ms && t.clock_ms - time <= 1000,
                "ID {} has the time {time}, the database clock read {} after it",
                t.id,
                t.clock_ms
            );
            for (i, value) in &node_columns {
                assert_eq!(row[*i], value, "{} of {}", header[*i], t.id);
            }
            count += 1;
        }
        assert_eq!(count, all.len(), "every ID decoded");
        // Exactly the committed inserts are in the table.
        let mut inserted: Vec<i64> = all
            .iter()
            .filter(|t| t.way == Way::Insert && !t.rolled_back)
            .map(|t| t.id)
            .collect();
        inserted.sort_unstable();
        let rows = self
            .place
            .run(&format!("SELECT id FROM {} ORDER BY id;", self.table))
            .unwrap();
        let rows: Vec<i64> = rows.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(rows.len(), inserted.len(), "rows in {}", self.table);
        assert!(
            rows == inserted,
            "the rows of {} are the committed inserts",
            self.table
        );
    }
}

fn parse(line: &str) -> Taken {
    let cols: Vec<&str> = line.split('\t').collect();
    let [id, clock, mark] = cols[..] else {
        panic!("not an ID, a clock and a mark: {line:?}");
    };
    Taken {
        id: id.parse().unwrap(),
        clock_ms: clock.parse().unwrap(),
        way: match mark {
            "s" | "S" => Way::Select,
            _ => Way::Insert,
        },
        rolled_back: mark == "S" || mark == "I",
    }
}

/// Sorting, not a set of pairs: hundreds of thousands of IDs.
pub fn assert_no_duplicates(all: &[Taken]) {
    let mut ids: Vec<u64> = all.iter().map(|t| t.id as u64).collect();
    ids.sort_unstable();
    if let Some(pair) = ids.windows(2).find(|p| p[0] == p[1]) {
        let twice: Vec<&Taken> = all.iter().filter(|t| t.id as u64 == pair[0]).collect();
        panic!("ID {} was issued twice: {twice:?}", pair[0] as i64);
    }
}

/// Every ID decoded by `snowflake decode --csv`, in order: its CSV, a
/// header row and one row an ID.
pub fn decode(layout: &[&str], all: &[Taken]) -> String {
    let input: String = all.iter().map(|t| format!("{}\n", t.id as u64)).collect();
    snowflake()
        .args(["decode", "--csv"])
        .args(layout)
        .arg("-")
        .write_stdin(input)
        .assert()
        .success()
        .stdout_text()
}
