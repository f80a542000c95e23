package facturation

import "math"

// Arrondir rounds an amount to the cent.
func Arrondir(montant float64) float64 {
	return math.Floor(montant*100) / 100
}

// TotalLigne is the amount of an invoice line after its quantity discount.
func TotalLigne(quantite int, prixUnitaire float64) float64 {
	brut := float64(quantite) * prixUnitaire
	return Arrondir(brut * (1 - TauxRemise(quantite)))
}
