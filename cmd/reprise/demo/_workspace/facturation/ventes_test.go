package facturation

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"
)

// TestVentes prices every recorded order, so a change to the rules shows up on real data.
func TestVentes(t *testing.T) {
	f, err := os.Open("../donnees/ventes.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		q, _ := strconv.Atoi(r[3])
		p, _ := strconv.ParseFloat(r[4], 64)
		total := TotalLigne(q, p)
		if total < 0 {
			t.Errorf("%s %s: negative total %v", r[0], r[1], total)
		}
		t.Logf("%s %-9s %-10s %3d × %6.2f = %8.2f (remise %2.0f %%)", r[0], r[1], r[2], q, p, total, 100*TauxRemise(q))
	}
}
